// The docker runtime's commands, against a recording `docker` first on PATH (a test double that
// logs its arguments and answers `image inspect`, `compose ps` and `inspect`). When a real
// engine answers (`docker info`), the suite also checks that the binary it would call exists.

import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../infra/logging.ts';
import { DockerRuntime } from '../../infra/updater/docker-runtime.ts';
import { StepError } from '../../infra/updater/runtime.ts';
import type { Manifest } from '../../domain/updates/manifest.ts';

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const manifest: Manifest = {
  schema: 1,
  channel: 'stable',
  version: '1.1.0',
  expires_at: '2999-01-01T00:00:00Z',
  image: { repository: 'registry.example/orchard', digest: DIGEST },
  artifact: { url: 'http://x/a.tgz', sha256: 'cd'.repeat(32) },
  migrations: ['001_events'],
  requirements: [
    { id: 'key', kind: 'env', target: 'NEW_KEY', action: 'set NEW_KEY' },
    { id: 'present', kind: 'env', target: 'ORCH_LISTEN', action: 'none' },
    { id: 'svc', kind: 'compose_service', target: 'runner', action: 'add the runner service' },
    { id: 'secret', kind: 'secret_file', target: '/run/secrets/orch_secret_key', action: 'mount it' },
    { id: 'install', kind: 'installer', target: 'step', action: 'run it' },
  ],
};

// The double: every call appended to $DOCKER_LOG (args and ORCHARD_IMAGE); canned answers.
const DOUBLE = `#!/bin/sh
printf '%s|ORCHARD_IMAGE=%s\\n' "$*" "$ORCHARD_IMAGE" >> "$DOCKER_LOG"
case "$*" in
  "image inspect"*) [ -n "$DOCKER_BAD_DIGEST" ] && echo '["registry.example/orchard@sha256:0000"]' || echo '["registry.example/orchard@${DIGEST}"]' ;;
  *"ps --format"*) printf 'orch\\nchat\\nregistry\\npostgres\\n' ;;
  *"ps -q orch"*) echo c0ffee ;;
  "inspect --format"*) echo '["ORCH_LISTEN=0.0.0.0:8585","PATH=/usr/bin"]|[{"Destination":"/run/secrets/orch_secret_key"}]' ;;
  *"exec -T postgres pg_dump"*) echo '-- dump' ;;
  *"exec -T postgres psql"*) [ -n "$DOCKER_PSQL_STOPS_READING" ] || cat > /dev/null ;;
  *"run --rm"*) [ -n "$DOCKER_FAIL_MIGRATE" ] && { echo 'migration 011 failed' >&2; exit 1; } ;;
esac
exit 0
`;

interface Ctx {
  dir: string;
  log: string;
  runtime: DockerRuntime;
  path: string;
}
const test = suite<Ctx>('updates: the docker runtime');
test.before(async (ctx) => {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-docker-'));
  ctx.log = path.join(ctx.dir, 'calls.log');
  await writeFile(path.join(ctx.dir, 'docker'), DOUBLE);
  await chmod(path.join(ctx.dir, 'docker'), 0o755);
  ctx.path = process.env.PATH ?? '';
  process.env.PATH = `${ctx.dir}:${ctx.path}`;
  process.env.DOCKER_LOG = ctx.log;
  ctx.runtime = new DockerRuntime({
    composeFile: '/srv/orchard/compose.yaml',
    dataDir: ctx.dir,
    databaseUrl: 'postgres://orchard:pw@postgres:5432/orchard',
    drainSecs: 30,
    health: { orch: 'http://127.0.0.1:9', chat: 'http://127.0.0.1:9', registry: 'http://127.0.0.1:9' },
    initialImage: 'orchard:1.0.0',
    log: createLogger({ level: 'error', sink: () => {} }),
  });
});
test.after(async (ctx) => {
  process.env.PATH = ctx.path;
  delete process.env.DOCKER_LOG;
  await rm(ctx.dir, { recursive: true, force: true });
});
test.before.each(async (ctx) => writeFile(ctx.log, ''));

const calls = async (ctx: Ctx) => (await readFile(ctx.log, 'utf8')).split('\n').filter(Boolean);
const C = 'compose -f /srv/orchard/compose.yaml';
const IMAGE = `registry.example/orchard@${DIGEST}`;

test('a swap: pull by digest, inspect, snapshot in the postgres container, stop, migrate, recreate with ORCHARD_IMAGE', async (ctx) => {
  const r = ctx.runtime;
  await r.pull(manifest);
  await r.verifyDigest(manifest);
  await r.snapshot(path.join(ctx.dir, 'snap.sql'));
  await r.drain();
  await r.migrate(manifest);
  await r.recreate(manifest);
  assert.equal(await calls(ctx), [
    `pull ${IMAGE}|ORCHARD_IMAGE=`,
    `image inspect --format {{json .RepoDigests}} ${IMAGE}|ORCHARD_IMAGE=`,
    `${C} exec -T postgres pg_dump --clean --if-exists --no-owner --no-privileges -U orchard orchard|ORCHARD_IMAGE=`,
    `${C} stop --timeout 30 orch chat registry|ORCHARD_IMAGE=`,
    `${C} run --rm --no-deps orch migrate|ORCHARD_IMAGE=${IMAGE}`,
    `${C} up -d --no-deps --force-recreate orch chat registry|ORCHARD_IMAGE=${IMAGE}`,
  ]);
  assert.is(await readFile(path.join(ctx.dir, 'snap.sql'), 'utf8'), '-- dump\n');
});

test('a restore whose psql stops reading the dump fails, whatever psql exits with', async (ctx) => {
  const dump = path.join(ctx.dir, 'big.sql');
  await writeFile(dump, '-- dump\n'.repeat(200_000)); // far past a pipe's buffer
  process.env.DOCKER_PSQL_STOPS_READING = '1';
  try {
    await ctx.runtime.restore(dump);
    assert.unreachable('the restore should fail');
  } catch (error) {
    assert.instance(error, StepError);
    assert.is((error as StepError).code, 'restore_failed');
  } finally {
    delete process.env.DOCKER_PSQL_STOPS_READING;
  }
});

test('a rollback restores with psql in one transaction and recreates the prior image', async (ctx) => {
  await writeFile(path.join(ctx.dir, 'snap.sql'), '-- dump\n');
  await ctx.runtime.restore(path.join(ctx.dir, 'snap.sql'));
  await ctx.runtime.restartPrior('1.0.0');
  const log = await calls(ctx);
  assert.match(log[0]!, /exec -T postgres psql -X -q --single-transaction -v ON_ERROR_STOP=1 -U orchard -d orchard/);
  assert.is(log[1], `${C} up -d --no-deps --force-recreate orch chat registry|ORCHARD_IMAGE=orchard:1.0.0`);
});

test('a digest that does not match and a failing migration are step errors', async (ctx) => {
  process.env.DOCKER_BAD_DIGEST = '1';
  process.env.DOCKER_FAIL_MIGRATE = '1';
  try {
    for (const [fn, code] of [
      [() => ctx.runtime.verifyDigest(manifest), 'digest_mismatch'],
      [() => ctx.runtime.migrate(manifest), 'migration_failed'],
    ] as const) {
      try {
        await fn();
        assert.unreachable();
      } catch (error) {
        assert.instance(error, StepError);
        assert.is((error as StepError).code, code);
      }
    }
  } finally {
    delete process.env.DOCKER_BAD_DIGEST;
    delete process.env.DOCKER_FAIL_MIGRATE;
  }
});

test("delivery: requirements read from compose ps and the orch container's inspect", async (ctx) => {
  const items = await ctx.runtime.delivery(manifest.requirements);
  assert.equal(
    items.map((i) => [i.id, i.status]),
    [
      ['key', 'missing'],
      ['present', 'present'],
      ['svc', 'missing'],
      ['secret', 'present'],
      ['install', 'unverifiable'],
    ],
  );
});

test('a live engine, when one answers', async () => {
  const info = await promisify(execFile)('/usr/bin/docker', ['info', '--format', '{{.ServerVersion}}']).catch(
    () => null,
  );
  if (!info) {
    console.log('  (no Docker engine answers: the live check is skipped)');
    return;
  }
  assert.ok(info.stdout.trim().length > 0);
});

test.run();
