// `orchard release bundle`: a release's sources precompiled into dist/ (esbuild), which
// bin/orchard.mjs then runs instead of compiling the TypeScript through tsx; a working tree is
// refused, since a bundle there would shadow later edits. The bundled release's database
// migrations and health are exercised end to end by tests/e2e/updates-process.test.ts (every
// release it builds is bundled).

import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { orchard } from '../support/cli.ts';
import { ROOT } from '../support/releases.ts';

const run = promisify(execFile);
const SOURCES = ['bin', 'api', 'crypto', 'domain', 'infra', 'main', 'projections', 'package.json', 'tsconfig.json'];

interface Ctx {
  dir: string;
}
const test = suite<Ctx>('updates: release bundle');
test.before(async (ctx) => {
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-bundle-'));
  for (const entry of SOURCES) await cp(path.join(ROOT, entry), path.join(ctx.dir, entry), { recursive: true });
  await symlink(path.join(ROOT, 'node_modules'), path.join(ctx.dir, 'node_modules'));
  const pkg = JSON.parse(await readFile(path.join(ctx.dir, 'package.json'), 'utf8'));
  await writeFile(path.join(ctx.dir, 'package.json'), JSON.stringify({ ...pkg, version: '9.8.7' }));
});
test.after(async ({ dir }) => {
  await rm(dir, { recursive: true, force: true });
});

test('a working tree is refused: the bundle would shadow later edits', async () => {
  const r = await orchard({}, 'release', 'bundle', ROOT);
  assert.is(r.code, 2);
  assert.match(r.stderr, /git working tree/);
  assert.not.ok(existsSync(path.join(ROOT, 'dist')));
});

test('a build directory is bundled into dist/, and its CLI then runs without the TypeScript sources', async ({
  dir,
}) => {
  const r = await orchard({}, 'release', 'bundle', dir);
  assert.is(r.code, 0, r.stderr);
  assert.is(JSON.parse(r.stdout).outdir, path.join(dir, 'dist'));
  assert.ok(existsSync(path.join(dir, 'dist', 'cli.js')));
  // Sources that can no longer load: only the bundle can answer.
  await writeFile(path.join(dir, 'main', 'cli.ts'), "throw new Error('the TypeScript sources were loaded');\n");
  const { stdout } = await run(process.execPath, [path.join(dir, 'bin', 'orchard.mjs'), 'openapi', 'registry'], {
    maxBuffer: 64 << 20,
  });
  // The version is the release's package.json, found from the bundle's own location.
  assert.is(JSON.parse(stdout).info.version, '9.8.7');
});

test('a directory without orchard sources is refused', async ({ dir }) => {
  const r = await orchard({}, 'release', 'bundle', path.join(dir, 'dist'));
  assert.is(r.code, 2);
  assert.match(r.stderr, /no orchard sources/);
});

test.run();
