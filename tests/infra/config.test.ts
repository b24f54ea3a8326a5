// The configuration's declarations (infra/config/): a bad value is one line naming the variable
// and what was wrong; several bad values are all listed; secrets are marked as such.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { envVarMeta } from '../../infra/config/kinds.ts';
import { SECTIONS } from '../../infra/config/sections.ts';
import { ConfigError, loadConfig } from '../../infra/config.ts';

const test = suite('config: declarations and errors');

/** The error loadConfig throws for `env` (the test fails if it loads). */
function refusal(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.instance(error, ConfigError);
    return error as ConfigError;
  }
  assert.unreachable(`loadConfig accepted ${JSON.stringify(env)}`);
  throw new Error('unreachable');
}

test('a bad integer: one line naming the variable and the value', () => {
  assert.is(
    refusal({ ORCH_RUNNER_CONCURRENCY: 'abc' }).message,
    'ORCH_RUNNER_CONCURRENCY: expected a positive integer, got "abc"',
  );
  assert.is(
    refusal({ ORCH_TRUSTED_PROXY_HOPS: '-1' }).message,
    'ORCH_TRUSTED_PROXY_HOPS: expected a whole number (0 or more), got "-1"',
  );
});

test('a bad choice: CHATSVC_REGISTRATION names the accepted values', () => {
  assert.is(
    refusal({ CHATSVC_REGISTRATION: 'sometimes' }).message,
    'CHATSVC_REGISTRATION: expected open, invite or closed, got "sometimes"',
  );
  assert.is(loadConfig({ CHATSVC_REGISTRATION: ' Invite ' }).chat.registration, 'invite');
});

test('a bad listen address: ORCH_LISTEN', () => {
  assert.is(
    refusal({ ORCH_LISTEN: 'localhost' }).message,
    'ORCH_LISTEN: expected a listen address (host:port), got "localhost"',
  );
});

test('a bad hex key: ORCH_INTEGRATION_ENCRYPTION_KEY, given directly or through its file', () => {
  assert.is(
    refusal({ ORCH_INTEGRATION_ENCRYPTION_KEY: 'abc' }).message,
    'ORCH_INTEGRATION_ENCRYPTION_KEY: expected exactly 64 hex characters (32 bytes), got 3 characters',
  );
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'orchard-config-')), 'key');
  writeFileSync(file, 'zz\n');
  assert.is(
    refusal({ ORCH_INTEGRATION_ENCRYPTION_KEY_FILE: file }).message,
    'ORCH_INTEGRATION_ENCRYPTION_KEY: expected exactly 64 hex characters (32 bytes), got 2 characters',
  );
  assert.is(
    refusal({ ADMIN_API_KEY_FILE: '/nonexistent/admin.key' }).message,
    'ADMIN_API_KEY_FILE: names a file that does not exist: /nonexistent/admin.key',
  );
});

test('several bad values: every one listed, one line each, in declaration order', () => {
  const error = refusal({
    ORCH_RUNNER_CONCURRENCY: '0',
    CHATSVC_REGISTRATION: 'x',
    ORCH_LLM_PROVIDER: 'gpt',
    DATABASE_POOL_SIZE: '1.5',
  });
  assert.equal(error.problems, [
    'DATABASE_POOL_SIZE: expected a positive integer, got "1.5"',
    'CHATSVC_REGISTRATION: expected open, invite or closed, got "x"',
    'ORCH_RUNNER_CONCURRENCY: expected a positive integer, got "0"',
    'ORCH_LLM_PROVIDER: expected local, openai or anthropic, got "gpt"',
  ]);
  assert.is(error.message, error.problems.join('\n'));
});

test('defaults: blank counts as unset', () => {
  const config = loadConfig({ ORCH_RUNNER_CONCURRENCY: '  ', ORCH_LISTEN: '', CHATSVC_REGISTRATION: ' ' });
  assert.is(config.runner.concurrency, 4);
  assert.equal(config.listen.orch, { host: '127.0.0.1', port: 8585 });
  assert.is(config.chat.registration, 'open');
});

test('secrets are marked: every key, token, secret or password variable, and the file naming one', () => {
  const looksSecret = /(_KEY|_TOKEN|_SECRET|PASSWORD)(_FILE)?$/;
  const notSecret = new Set(['ORCH_UPDATER_PUBLIC_KEY_FILE']); // a public key
  for (const section of SECTIONS) {
    for (const [name, schema] of Object.entries(section.vars)) {
      const meta = envVarMeta.get(schema);
      assert.ok(meta?.description, `${name} has a description`);
      if (looksSecret.test(name) && !notSecret.has(name)) assert.ok(meta!.secret, `${name} is marked secret`);
      const pair = section.vars[`${name}_FILE`];
      if (meta!.secret && pair) assert.ok(envVarMeta.get(pair)!.secret, `${name}_FILE is marked secret like ${name}`);
    }
  }
});

test.run();
