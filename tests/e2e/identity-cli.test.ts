// Key recovery from the host: `orchard keys rotate` (interactive terminals only) and
// `orchard keys runner-status`, plus the server's refusal of the runner beside a literal admin key.

import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { keyMaterial } from '../../api/orchestration/users/keys.ts';
import { userDecider } from '../../domain/orchestration/users/decider.ts';
import { userStream } from '../../domain/orchestration/streams.ts';
import { orchard, orchardOnTerminal } from '../support/cli.ts';
import { createAccount, type Account } from '../support/principals.ts';
import { http, startTestServices, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_cli-keys-admin-key-000000000000000';
const RUNNER_KEY = 'orch_cli-keys-runner-key-00000000000000';

interface Ctx {
  s: TestServices;
  user: Account;
  env: Record<string, string>;
}
const test = suite<Ctx>('e2e identity: key recovery CLI and the runner principal');
test.before(async (ctx) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-cli-keys-'));
  await writeFile(path.join(dir, 'admin.key'), ADMIN_KEY);
  ctx.s = await startTestServices('identity_cli', {
    ADMIN_API_KEY_FILE: path.join(dir, 'admin.key'),
    ORCH_RUNNER_API_KEY: RUNNER_KEY,
  });
  ctx.user = await createAccount(ctx.s, ADMIN_KEY, 'user', 'cli-user');
  ctx.env = { ...ctx.s.env, LOG_LEVEL: 'error' };
});
test.after(async ({ s }) => s?.close());

test('keys rotate refuses to run without an interactive terminal', async ({ env, user, s }) => {
  const r = await orchard(env, 'keys', 'rotate', user.username);
  assert.is(r.code, 2);
  assert.match(r.stderr, /not an interactive terminal/);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': user.apiKey } })).status, 200);
});

test('keys rotate on a terminal prints the new key once; the old one is refused; the rotation is recorded', async ({
  env,
  user,
  s,
}) => {
  const r = await orchardOnTerminal(env, 'keys', 'rotate', user.username);
  assert.is(r.code, 0, r.stdout + r.stderr);
  const key = /(orch_[A-Za-z0-9_-]{20,})/.exec(r.stdout)?.[1];
  assert.ok(key, r.stdout);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': user.apiKey } })).status, 401);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': key! } })).status, 200);
  const { rows } = await s.db.pool.query(`SELECT route, outcome FROM api_key_rotations WHERE target_user_id = $1`, [
    user.id,
  ]);
  assert.equal(rows, [{ route: 'cli', outcome: 'rotated' }]);
  user.apiKey = key!;
});

test('keys rotate refuses agent credentials and the runner, and an unknown user', async ({ env, s }) => {
  const agentId = randomUUID();
  await s.platform.commands.run(
    userStream(agentId),
    userDecider,
    {
      type: 'CreateUser',
      user_id: agentId,
      username: 'agent-cli',
      email: 'agent-cli@agents.invalid',
      role: 'user',
      auth_source: 'agent',
      principal_type: 'agent',
      key: keyMaterial(s.platform.sealKey, agentId, 'orch_agent-cli-key'),
      password_hash: null,
      by: null,
      at: new Date().toISOString(),
    },
    { actor: { kind: 'system', id: 'test' }, correlationId: null },
  );
  const agent = await orchardOnTerminal(env, 'keys', 'rotate', 'agent-cli');
  assert.is(agent.code, 1);
  assert.match(agent.stdout + agent.stderr, /agent credential/);
  const runner = await orchardOnTerminal(env, 'keys', 'rotate', 'runner');
  assert.is(runner.code, 1);
  assert.match(runner.stdout + runner.stderr, /ORCH_RUNNER_API_KEY/);
  const nobody = await orchardOnTerminal(env, 'keys', 'rotate', 'nobody-here');
  assert.is(nobody.code, 1);
  const { rows } = await s.db.pool.query(
    `SELECT reason FROM api_key_rotations WHERE route = 'cli' AND outcome = 'refused' ORDER BY at`,
  );
  assert.equal(
    rows.map((r) => r.reason),
    ['api_key_rotation_agent_credential', 'api_key_rotation_service_principal'],
  );
});

test('runner-status: VERIFIED when registered with the configured key', async ({ env, s }) => {
  const r = await orchard(env, 'keys', 'runner-status');
  assert.is(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^VERIFIED: /);
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': RUNNER_KEY } })).body.role, 'user');
});

test('runner-status: NOT VERIFIED for another key or a literal admin key; CANNOT VERIFY without a key or a database', async ({
  env,
}) => {
  const other = await orchard({ ...env, ORCH_RUNNER_API_KEY: 'orch_some-other-runner-key' }, 'keys', 'runner-status');
  assert.is(other.code, 3);
  assert.match(other.stdout, /^NOT VERIFIED: .*differs/);
  const literal = await orchard({ ...env, ADMIN_API_KEY: ADMIN_KEY }, 'keys', 'runner-status');
  assert.is(literal.code, 3);
  assert.match(literal.stdout, /^NOT VERIFIED: .*ADMIN_API_KEY_FILE/);
  const unset = { ...env };
  delete unset.ORCH_RUNNER_API_KEY;
  const none = await orchard({ ...unset, ORCH_RUNNER_API_KEY: '' }, 'keys', 'runner-status');
  assert.is(none.code, 4);
  assert.match(none.stdout, /^CANNOT VERIFY: ORCH_RUNNER_API_KEY/);
  const noDb = await orchard({ ...env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }, 'keys', 'runner-status');
  assert.is(noDb.code, 4);
  assert.match(noDb.stdout, /^CANNOT VERIFY: the database is unreachable/);
});

test('the server refuses the runner while ADMIN_API_KEY is a literal in its environment, and says so', async ({
  s,
}) => {
  await s.restart({ ADMIN_API_KEY: ADMIN_KEY });
  const r = await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': RUNNER_KEY } });
  assert.is(r.status, 401);
  assert.ok(s.logLines.some((l) => l.includes('runner_principal_refused') && l.includes('ADMIN_API_KEY_FILE')));
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': ADMIN_KEY } })).status, 200);
  await s.restart({ ADMIN_API_KEY: undefined });
  assert.is((await http(`${s.orch}/api/v1/me`, { headers: { 'X-API-Key': RUNNER_KEY } })).status, 200);
});

test('the runner key may not be the admin key', async ({ s }) => {
  await s.restart({ ORCH_RUNNER_API_KEY: ADMIN_KEY });
  assert.ok(s.logLines.some((l) => l.includes('runner_principal_refused') && l.includes('own, non-admin key')));
  await s.restart({ ORCH_RUNNER_API_KEY: RUNNER_KEY });
});

test.run();
