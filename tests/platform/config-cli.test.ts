// `orchard config` through the real CLI: every declared variable with its effective value and
// source; secrets never in plaintext; a configuration a start would refuse exits 1 saying why.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { orchard } from '../support/cli.ts';

const test = suite('orchard config');

const SECRET = 'sk-config-cli-must-not-appear-0123456789';

test('prints effective values and sources, secrets redacted', async () => {
  const { code, stdout, stderr } = await orchard(
    { ADMIN_API_KEY: SECRET, ORCH_LLM_API_KEY: SECRET, ORCH_RUNNER_CONCURRENCY: '7', ORCH_RUNNER_POLL_MS: '' },
    'config',
  );
  assert.is(code, 0, stderr);
  assert.not.ok(stdout.includes(SECRET), 'the secret is not printed');
  assert.not.ok(stderr.includes(SECRET), 'nor logged');
  assert.match(stdout, /^ORCH_RUNNER_CONCURRENCY +7 +env$/m);
  assert.match(stdout, /^ORCH_RUNNER_POLL_MS +1000 +default$/m);
  assert.match(stdout, /^ADMIN_API_KEY +<redacted> +env$/m);
  assert.match(stdout, /^# Model providers$/m);
});

test('a secret read from its _FILE is redacted and says so', async () => {
  const { code, stdout } = await orchard(
    { ORCH_METRICS_TOKEN: '', ORCH_METRICS_TOKEN_FILE: '/nonexistent/metrics-token' },
    'config',
  );
  assert.match(stdout, /^ORCH_METRICS_TOKEN +<redacted> +file \(ORCH_METRICS_TOKEN_FILE\)$/m);
  assert.is(code, 1, 'the file does not exist: a start would refuse it');
});

test('a bad value: the table still prints, then each problem on its own line, exit 1', async () => {
  const { code, stdout, stderr } = await orchard(
    { ORCH_RUNNER_CONCURRENCY: 'abc', CHATSVC_REGISTRATION: 'sometimes' },
    'config',
  );
  assert.is(code, 1);
  assert.match(stdout, /^ORCH_RUNNER_CONCURRENCY +abc +env$/m);
  assert.ok(stderr.includes('\n  CHATSVC_REGISTRATION: expected open, invite or closed, got "sometimes"\n'), stderr);
  assert.ok(stderr.includes('\n  ORCH_RUNNER_CONCURRENCY: expected a positive integer, got "abc"\n'), stderr);
});

test('the usage lists config', async () => {
  const { stderr } = await orchard({}, 'help');
  assert.match(stderr, /^ {2}config +print every configuration variable/m);
});

test.run();
