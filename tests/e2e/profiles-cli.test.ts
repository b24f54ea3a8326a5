// `orchard profiles set-reply-mode <slug> <mode>` as an operator runs it: a child process against
// the database of a running server. The change is an operator action in the log (actor system),
// seen by the API at once; no API route sets it.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { orchard } from '../support/cli.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_profiles-cli-admin-key-00000000000';
const admin = { 'X-API-Key': ADMIN_KEY };

const test = suite<{ s: TestServices }>('cli: profiles set-reply-mode');
test.before(async (ctx) => {
  ctx.s = await startTestServices('profiles_cli', { ADMIN_API_KEY: ADMIN_KEY });
  const r = await http(`${ctx.s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'chatty', name: 'Chatty' },
  });
  assert.is(r.status, 201, r.text);
});
test.after(async ({ s }) => s?.close());

const mode = async (s: TestServices) =>
  (await http(`${s.orch}/api/v1/agent-chat/profiles/chatty`, { headers: admin })).body.channel_reply_mode;

test('sets the mode by an operator event the running server shows at once', async ({ s }) => {
  assert.is(await mode(s), 'dm_only');
  const r = await orchard(s.env, 'profiles', 'set-reply-mode', 'chatty', 'channel_mention');
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /chatty: channel_reply_mode is now channel_mention/);
  assert.is(await mode(s), 'channel_mention');
  const { rows } = await s.db.pool.query(
    `SELECT stream_id, data, metadata FROM events WHERE type = 'ProfileReplyModeChanged'`,
  );
  assert.is(rows.length, 1);
  assert.is(rows[0].stream_id, 'orch.agent_profile-chatty');
  assert.equal(rows[0].metadata.actor, { kind: 'system', id: 'operator-cli' });
  assert.is(rows[0].data.channel_reply_mode, 'channel_mention');
  const history = await http(`${s.orch}/api/v1/agent-chat/profiles/chatty/history`, { headers: admin });
  assert.equal(history.body.at(-1).changed_fields, ['channel_reply_mode']);
  assert.equal(history.body.at(-1).actor, { kind: 'system', id: 'operator-cli' });
});

test('the same mode again appends nothing; both is accepted', async ({ s }) => {
  const again = await orchard(s.env, 'profiles', 'set-reply-mode', 'chatty', 'channel_mention');
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stdout, /already channel_mention/);
  assert.is(
    (await s.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE type = 'ProfileReplyModeChanged'`)).rows[0].n,
    1,
  );
  assert.is((await orchard(s.env, 'profiles', 'set-reply-mode', 'chatty', 'both')).code, 0);
  assert.is(await mode(s), 'both');
});

test('an unknown mode or missing arguments: usage, exit 2; an unknown profile: exit 1; nothing written', async ({
  s,
}) => {
  const before = (await s.db.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n;
  for (const args of [
    ['set-reply-mode', 'chatty', 'shout'],
    ['set-reply-mode', 'chatty'],
    ['set-reply-mode'],
    ['bogus'],
    [],
  ]) {
    const r = await orchard(s.env, 'profiles', ...args);
    assert.is(r.code, 2, args.join(' '));
    assert.match(r.stderr, /usage: orchard profiles set-reply-mode <slug> <dm_only\|channel_mention\|both>/);
  }
  const unknown = await orchard(s.env, 'profiles', 'set-reply-mode', 'ghost', 'both');
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /no profile with slug ghost/);
  assert.is((await s.db.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n, before);
  assert.is(await mode(s), 'both');
});

test.run();
