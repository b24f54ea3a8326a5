// The `orchard` CLI as a user runs it: a child process against a real database.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { orchard } from '../support/cli.ts';
import { startTestServices, type TestServices } from '../support/services.ts';

const test = suite<{ s: TestServices }>('cli');
test.before(async (ctx) => {
  ctx.s = await startTestServices('cli', { ADMIN_API_KEY: 'orch_cli-admin-key-0000000000000000' });
});
test.after(async ({ s }) => s?.close());

test('replay prints the log as JSON lines, filterable by type and stream prefix', async ({ s }) => {
  const all = await orchard(s.env, 'replay');
  assert.is(all.code, 0, all.stderr);
  const events = all.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.ok(events.length >= 2);
  for (const e of events) {
    assert.equal(Object.keys(e).sort(), [
      'created_at',
      'data',
      'id',
      'metadata',
      'position',
      'revision',
      'stream',
      'type',
    ]);
    assert.match(e.position, /^\d+\/\d+$/);
  }
  const typed = await orchard(s.env, 'replay', '--type', 'UserCreated');
  const lines = typed.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(
    lines.map((e) => e.type),
    ['UserCreated'],
  );
  const prefixed = await orchard(s.env, 'replay', '--stream-prefix', 'orch.username_reservation-');
  assert.ok(
    prefixed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .every((e) => e.stream.startsWith('orch.username_reservation-')),
  );
  const byCategory = await orchard(s.env, 'replay', '--category', 'orch.username_reservation');
  assert.is(byCategory.stdout, prefixed.stdout, 'a category selects what its prefix does');
  const unknown = await orchard(s.env, 'replay', '--category', 'username_reservation');
  assert.is(unknown.code, 2);
  assert.match(
    unknown.stderr,
    /unknown stream category "username_reservation"; the declared categories are listed in docs\/reference\/streams\.md/,
  );
  assert.not.ok(all.stdout.includes('orch_cli-admin-key'));
});

test('rebuild is refused while a server runs the projection, then replays to the same table', async ({ s }) => {
  const refused = await orchard(s.env, 'rebuild', 'users');
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /running in another process/);
  const dump = async () => (await s.db.pool.query('SELECT * FROM users ORDER BY id')).rows;
  const before = await dump();
  await s.stop();
  const rebuilt = await orchard(s.env, 'rebuild', '--all');
  assert.is(rebuilt.code, 0, rebuilt.stderr);
  assert.equal(JSON.parse(rebuilt.stdout.trim().split('\n')[0]!).projection, 'users');
  assert.equal(await dump(), before);
  await s.restart();
});

test('migrate applies migrations and exits; unknown commands exit 2 with usage', async ({ s }) => {
  const migrated = await orchard(s.env, 'migrate');
  assert.is(migrated.code, 0, migrated.stderr);
  const bad = await orchard(s.env, 'serve', 'bogus');
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /usage: orchard/);
});

test('openapi prints the whole document through a pipe, however large', async () => {
  const out = await orchard({}, 'openapi', 'orch');
  assert.is(out.code, 0, out.stderr);
  assert.ok(out.stdout.length > 65_536, `${out.stdout.length} bytes`);
  const document = JSON.parse(out.stdout);
  assert.ok(document.paths['/api/v1/knowledge/ingest'].post);
});

test.run();
