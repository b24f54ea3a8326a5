// The stream tables (domain/*/streams.ts): every event type has a category, category names are
// unique and follow `<service>.<aggregate>`, the generated reference is current, and every stream
// name in the code comes from the tables (a scan of the sources' string and template literals).

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript5';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVENT_TYPES } from '../../domain/events.ts';
import { CHAT_STREAMS, readCursorStream } from '../../domain/chat/streams.ts';
import { ORCH_STREAMS, REGISTRATION_STREAM } from '../../domain/orchestration/streams.ts';
import { RESERVATION_EVENT_TYPES, reservationStream } from '../../domain/shared/reservation.ts';
import { CATEGORY_RULE, categoryOf, streamCategory } from '../../domain/shared/streams.ts';
import { ALL_STREAM_CATEGORIES, STREAM_TABLES, streamCategoryNamed } from '../../domain/streams.ts';
import { STREAMS_REFERENCE_FILE, streamsMarkdown } from '../../domain/streams-reference.ts';
import { folderFor } from '../../api/orchestration/log/stream-deciders.ts';
import { categoryPrefixes } from '../../main/audit-cli.ts';
import { filesUnder } from '../support/files.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const test = suite('stream categories');

test('every event type of the catalog is carried by a declared category, and no category carries an undeclared one', () => {
  const carried = new Set(ALL_STREAM_CATEGORIES.flatMap((c) => c.events));
  assert.equal(
    EVENT_TYPES.filter((type) => !carried.has(type)),
    [],
  );
  assert.equal(
    [...carried].filter((type) => !EVENT_TYPES.includes(type)),
    [],
  );
});

test("category names are unique, follow <service>.<aggregate> and sit in their service's table", () => {
  const names = ALL_STREAM_CATEGORIES.map((c) => c.category);
  assert.equal(names.length, new Set(names).size, 'unique');
  for (const [service, table] of Object.entries(STREAM_TABLES)) {
    for (const [key, c] of Object.entries(table)) {
      assert.match(c.category, CATEGORY_RULE);
      assert.is(c.service, service, c.category);
      assert.is(c.category, `${service}.${key}`, 'the table key is the aggregate');
      assert.ok(c.id && c.description && c.events.length > 0, c.category);
    }
  }
  assert.throws(
    () => streamCategory('chat_message', { id: 'x', events: ['MessagePosted'], description: 'x' }),
    /does not follow/,
  );
  assert.throws(
    () => streamCategory('billing.invoice', { id: 'x', events: ['MessagePosted'], description: 'x' }),
    /does not follow/,
  );
  assert.throws(
    () => streamCategory('chat.Message', { id: 'x', events: ['MessagePosted'], description: 'x' }),
    /does not follow/,
  );
});

test('stream names: <category>-<id parts joined by _>, and their category is the declared one', () => {
  assert.is(CHAT_STREAMS.message.stream('m1'), 'chat.message-m1');
  assert.is(readCursorStream('c1', 'u1'), 'chat.read_cursor-c1_u1');
  assert.is(CHAT_STREAMS.prekey.stream('u1', 7), 'chat.prekey-u1_7');
  assert.is(REGISTRATION_STREAM, 'orch.registration-local');
  assert.is(categoryOf(ORCH_STREAMS.agent_profile.stream('customer-support')), 'orch.agent_profile');
  assert.is(streamCategoryNamed('registry.token')?.prefix, 'registry.token-');
  assert.is(streamCategoryNamed('registry_token'), undefined);
});

test('reservations: one declared category per kind; reservationStream takes only those; the admin view folds them', () => {
  const reservations = ALL_STREAM_CATEGORIES.filter((c) => c.events.includes(RESERVATION_EVENT_TYPES[0]));
  assert.equal(reservations.map((c) => c.category).sort(), [
    'chat.email_reservation',
    'chat.owner_reservation',
    'chat.username_reservation',
    'orch.email_reservation',
    'orch.username_reservation',
    'registry.customer_slug_reservation',
    'registry.lead_email_reservation',
  ]);
  for (const c of reservations) assert.ok(c.category.endsWith('_reservation'), c.category);
  assert.is(reservationStream(CHAT_STREAMS.username_reservation, 'alice'), 'chat.username_reservation-alice');
  assert.throws(() => reservationStream(CHAT_STREAMS.user, 'alice'), /not a reservation category/);
  assert.ok(folderFor('registry.customer_slug_reservation-acme'));
  assert.ok(folderFor('orch.user-u1'));
  assert.is(folderFor('chat.unknown_reservation-x'), null, 'an undeclared category is not folded, whatever its suffix');
  assert.is(folderFor('username_reservation-alice'), null, 'the old names are gone');
});

test('--category: declared categories give their prefixes; an unknown one is refused, naming where to look', () => {
  assert.equal(categoryPrefixes(['chat.message', 'orch.task']), { prefixes: ['chat.message-', 'orch.task-'] });
  const refused = categoryPrefixes(['chat_message']);
  assert.ok(
    'error' in refused && /chat_message/.test(refused.error) && refused.error.includes('docs/reference/streams.md'),
  );
});

test(`${STREAMS_REFERENCE_FILE} is current (node --import tsx main/docs-streams.ts --write)`, async () => {
  const written = await readFile(path.join(ROOT, STREAMS_REFERENCE_FILE), 'utf8');
  assert.ok(
    written === streamsMarkdown(),
    `${STREAMS_REFERENCE_FILE} is stale: run node --import tsx main/docs-streams.ts --write`,
  );
  for (const c of ALL_STREAM_CATEGORIES) assert.ok(written.includes(`| \`${c.category}\` |`), c.category);
});

// --- Every stream name in the code comes from the tables. -------------------------------------

/** Where stream names may be spelled: the tables and the declaration helper. */
const TABLE_FILES = new Set([
  'domain/orchestration/streams.ts',
  'domain/chat/streams.ts',
  'domain/registry/streams.ts',
  'domain/updates/streams.ts',
  'domain/shared/streams.ts',
]);

/** A stream name of a declared service: `chat.message-…`, in a literal. */
const NEW_STYLE = /(?<![\w.])(orch|chat|registry|platform)\.[a-z_]+-/;
/**
 * The categories before `<service>.` prefixes, built with a `-` at the start of a literal or of a
 * quoted name in one: a stray `user-${id}`, SQL's `'task-' || id`, a regex's `/^task-/`.
 */
const OLD_STYLE =
  /(?:^|['"`^])(user|session|audit|registration|project|task|agent|agent_profile|estate_[a-z_]+|integration|mcp_servers|agent_conversation|update_[a-z_]+|maintenance|customer|deployment|subscription|registry_[a-z_]+|chat_[a-z_]+|calendar_feed_token|meeting_reminder|[a-z_]+_reservation)-/;

/** Literals that look like old stream names and are not, with the reason. */
const NOT_STREAMS: { file: string; literal: RegExp; reason: string }[] = [
  {
    file: 'api/orchestration/agents/commands.ts',
    literal: /^agent-$/,
    reason: "an agent's account username, e-mail and profile slug (`agent-<id>`), not streams",
  },
  {
    file: 'domain/chat/bots/decider.ts',
    literal: /^integration-$/,
    reason: "an integration bot's username (`integration-<label>`)",
  },
  {
    file: 'api/chat/bots/routes.ts',
    literal: /^`integration-<label>`/,
    reason: "the route's description of that username",
  },
  { file: '*', literal: /^user-agent$/, reason: 'the HTTP header' },
  { file: '*', literal: /^customer-support$/, reason: "an agent template's slug" },
  { file: 'infra/config/platform.ts', literal: /^audit-signing\.key$/, reason: "the audit signing key's file name" },
];

export interface StrayName {
  file: string;
  line: number;
  literal: string;
  kind: 'declared-service' | 'old-category';
}

/** The string, template and regular-expression literals of `source` that build stream names outside the tables. */
export function strayStreamNames(file: string, source: string): StrayName[] {
  const found: StrayName[] = [];
  const sf = ts.createSourceFile(
    file,
    source,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const check = (node: ts.Node, text: string) => {
    const allowed = (kind: StrayName['kind']) =>
      (kind === 'declared-service' && TABLE_FILES.has(file)) ||
      NOT_STREAMS.some((n) => (n.file === '*' || n.file === file) && n.literal.test(text));
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    if (NEW_STYLE.test(text) && !allowed('declared-service'))
      found.push({ file, line, literal: text, kind: 'declared-service' });
    else if (OLD_STYLE.test(text) && !allowed('old-category'))
      found.push({ file, line, literal: text, kind: 'old-category' });
  };
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isRegularExpressionLiteral(node))
      check(node, node.text);
    else if (ts.isTemplateExpression(node)) {
      check(node.head, node.head.text);
      for (const span of node.templateSpans) check(span.literal, span.literal.text);
    }
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test('every stream name in the code comes from the tables (api, domain, infra, main, projections, crypto)', async () => {
  const stray: string[] = [];
  for (const folder of ['api', 'domain', 'infra', 'main', 'projections', 'crypto']) {
    for (const full of await filesUnder(path.join(ROOT, folder), '.ts')) {
      const file = path.relative(ROOT, full).split(path.sep).join('/');
      for (const s of strayStreamNames(file, await readFile(full, 'utf8')))
        stray.push(`${s.file}:${s.line} ${s.kind} ${JSON.stringify(s.literal)}`);
    }
  }
  assert.equal(stray, []);
});

test('the scan catches stream names built outside the tables, and leaves comments and allowed literals alone', () => {
  const source = [
    '// `chat.message-<uuid>` and `user-<uuid>` in a comment are documentation',
    'const a = (id: string) => `user-${id}`;',
    "const b = `SELECT 'task-' || id FROM tasks`;",
    'const c = (id: string) => `chat.message-${id}`;',
    "const d = 'registry.customer_slug_reservation-acme';",
    'const e = /^chat_scheduled_message-/;',
    "const f = { 'user-agent': 'orchard' };",
    'const g = `customer-support`;',
    "const h = 'chat.message'; // a category name, not a stream",
  ].join('\n');
  const stray = strayStreamNames('api/example.ts', source);
  assert.equal(
    stray.map((s) => [s.line, s.kind]),
    [
      [2, 'old-category'],
      [3, 'old-category'],
      [4, 'declared-service'],
      [5, 'declared-service'],
      [6, 'old-category'],
    ],
  );
  assert.equal(
    strayStreamNames('domain/chat/streams.ts', 'const c = (id: string) => `chat.message-${id}`;'),
    [],
    'the tables may spell them',
  );
});

test.run();
