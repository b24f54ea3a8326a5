// Serving the web console from the orchestration app (in-process, app.request()): index.html for
// `/` and client routes that accept HTML, JSON 404s under /api (whatever the Accept), hashed
// assets immutable and precompressed, the security headers, the "how to build" page without a
// build; and the build stamp and the rebuild decision `serve` takes before listening.

import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createOrchestrationApp } from '../../../api/orchestration/app.ts';
import {
  builtStamp,
  consoleBuildDecision,
  sourceStamp,
  STAMP_FILE,
} from '../../../api/orchestration/console/build-stamp.ts';
import { acceptsEncoding, CONSOLE_CSP } from '../../../api/orchestration/console/routes.ts';
import { createLogger } from '../../../infra/logging.ts';
import { orchDeps } from '../../../main/apps.ts';
import { ensureConsoleBuilt } from '../../../main/console.ts';
import { startTestApps, type TestServices } from '../../support/services.ts';

const INDEX =
  '<!doctype html><html lang="en"><head><title>console</title><script type="module" src="/assets/index-abc123.js"></script></head><body><div id="app"></div></body></html>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;

type App = ReturnType<typeof createOrchestrationApp>;
const test = suite<{ s: TestServices; dir: string; app: App; unbuilt: App }>('console: serving the web console');

test.before(async (ctx) => {
  ctx.s = await startTestApps('console_serving', {});
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-console-'));
  const dist = path.join(ctx.dir, 'dist');
  await mkdir(path.join(dist, 'assets'), { recursive: true });
  await writeFile(path.join(dist, 'index.html'), INDEX);
  await writeFile(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  await writeFile(path.join(dist, 'assets', 'index-abc123.js'), SCRIPT);
  await writeFile(path.join(dist, 'assets', 'index-abc123.js.gz'), gzipSync(SCRIPT));
  await writeFile(path.join(dist, 'assets', 'index-abc123.js.br'), brotliCompressSync(SCRIPT));
  await writeFile(path.join(dist, 'assets', 'plain-def456.css'), 'body{}');
  ctx.app = createOrchestrationApp({ ...orchDeps(ctx.s.platform), consoleDist: dist });
  ctx.unbuilt = createOrchestrationApp({ ...orchDeps(ctx.s.platform), consoleDist: path.join(ctx.dir, 'missing') });
});
test.after(async ({ s, dir }) => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
const get = (app: App, p: string, headers: Record<string, string> = {}, method = 'GET') =>
  app.request(`http://orch.test${p}`, { method, headers });

function securityHeaders(r: Response) {
  assert.is(r.headers.get('content-security-policy'), CONSOLE_CSP);
  assert.is(r.headers.get('x-content-type-options'), 'nosniff');
  assert.is(r.headers.get('referrer-policy'), 'same-origin');
}

test('/ and client routes that accept HTML get index.html, no-cache, with the security headers', async ({ app }) => {
  for (const p of ['/', '/admin', '/profiles/123/history', '/sign-in']) {
    const r = await get(app, p, HTML);
    assert.is(r.status, 200, p);
    assert.is(await r.text(), INDEX, p);
    assert.is(r.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.is(r.headers.get('cache-control'), 'no-cache');
    securityHeaders(r);
  }
  assert.is(CONSOLE_CSP, "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'");
  // `/` is the console whatever the Accept; a HEAD has the headers and no body.
  assert.is((await get(app, '/')).status, 200);
  const head = await get(app, '/admin', HTML, 'HEAD');
  assert.is(head.status, 200);
  assert.is(await head.text(), '');
  // Revalidation: the ETag answers 304.
  const etag = (await get(app, '/', HTML)).headers.get('etag')!;
  assert.ok(etag);
  assert.is((await get(app, '/cockpit', { ...HTML, 'if-none-match': etag })).status, 304);
});

test('/api, /auth, /ws and /metrics never get the page: an unknown /api path is the JSON 404 even for a browser', async ({
  app,
}) => {
  for (const p of ['/api/unknown', '/api/v1/nope', '/api', '/auth/nope', '/ws/nope', '/metrics/x']) {
    const r = await get(app, p, HTML);
    assert.is(r.status, 404, p);
    assert.match(r.headers.get('content-type') ?? '', /application\/json/, p);
    assert.equal(await r.json(), { error: 'not_found', message: 'no such route' }, p);
  }
  // A client route asked for without HTML (a script) is the JSON 404 too; so is a write.
  assert.is((await get(app, '/admin', { accept: 'application/json' })).status, 404);
  assert.is((await get(app, '/admin', HTML, 'POST')).status, 404);
  // The API still answers as before, and its responses do not carry the console's CSP.
  const health = await get(app, '/api/v1/health', HTML);
  assert.is(health.status, 200);
  assert.is(health.headers.get('content-security-policy'), null);
});

test('assets: immutable, precompressed by what the client accepts, never the page for an unknown one', async ({
  app,
}) => {
  const br = await get(app, '/assets/index-abc123.js', { 'accept-encoding': 'gzip, deflate, br' });
  assert.is(br.status, 200);
  assert.is(br.headers.get('content-encoding'), 'br');
  assert.is(br.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.is(br.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.is(br.headers.get('vary'), 'Accept-Encoding');
  securityHeaders(br);
  assert.is(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).toString(), SCRIPT);

  const gz = await get(app, '/assets/index-abc123.js', { 'accept-encoding': 'gzip, br;q=0' });
  assert.is(gz.headers.get('content-encoding'), 'gzip');
  assert.is(gunzipSync(Buffer.from(await gz.arrayBuffer())).toString(), SCRIPT);

  const identity = await get(app, '/assets/index-abc123.js');
  assert.is(identity.headers.get('content-encoding'), null);
  assert.is(await identity.text(), SCRIPT);
  // No precompressed copy: served as is.
  const css = await get(app, '/assets/plain-def456.css', { 'accept-encoding': 'br, gzip' });
  assert.is(css.headers.get('content-encoding'), null);
  assert.is(css.headers.get('content-type'), 'text/css; charset=utf-8');

  for (const p of [
    '/assets/missing-000.js',
    '/assets/index-abc123.js.br',
    '/assets/..%2findex.html',
    '/assets/.hidden',
  ]) {
    const r = await get(app, p, HTML);
    assert.is(r.status, 404, p);
    assert.equal(await r.json(), { error: 'not_found', message: 'no such route' }, p);
  }
  const icon = await get(app, '/favicon.svg');
  assert.is(icon.status, 200);
  assert.is(icon.headers.get('content-type'), 'image/svg+xml');
  assert.is(icon.headers.get('cache-control'), 'no-cache');
});

test('Accept-Encoding: q=0 refuses a coding; * admits it', () => {
  assert.ok(acceptsEncoding('gzip, br', 'br'));
  assert.not.ok(acceptsEncoding('gzip', 'br'));
  assert.not.ok(acceptsEncoding('br;q=0, gzip', 'br'));
  assert.ok(acceptsEncoding('*', 'gzip'));
  assert.not.ok(acceptsEncoding(undefined, 'gzip'));
});

test('without a build, / says how to build (503, same headers); the API is unaffected', async ({ unbuilt }) => {
  const r = await get(unbuilt, '/', HTML);
  assert.is(r.status, 503);
  const text = await r.text();
  assert.match(text, /The web console is not built/);
  assert.match(text, /npm run build:console/);
  assert.not.match(text, /<script|style=/);
  securityHeaders(r);
  assert.is((await get(unbuilt, '/admin', HTML)).status, 503);
  assert.is((await get(unbuilt, '/api/v1/health')).status, 200);
  assert.is((await get(unbuilt, '/api/unknown', HTML)).status, 404);
});

test('the rebuild decision: fresh serves, missing or stale rebuilds with Vite, without Vite serves as is or says how to build', () => {
  const d = (sources: string | null, built: string | null, vite: boolean) =>
    consoleBuildDecision({ sources, built, vite });
  assert.equal(d('a', 'a', true), { action: 'serve', reason: 'fresh' });
  assert.equal(d('a', 'a', false), { action: 'serve', reason: 'fresh' });
  assert.equal(d('a', null, true), { action: 'rebuild', reason: 'missing' });
  assert.equal(d('a', 'b', true), { action: 'rebuild', reason: 'stale' });
  assert.equal(d('a', 'b', false), { action: 'serve_as_is', reason: 'stale_without_vite' });
  assert.equal(d('a', null, false), { action: 'how_to_build', reason: 'missing_without_vite' });
  // An install that ships only the build (no sources): serve it; nothing at all: say how to build.
  assert.equal(d(null, 'b', false), { action: 'serve', reason: 'no_sources' });
  assert.equal(d(null, null, true), { action: 'how_to_build', reason: 'missing_without_vite' });
});

test('the stamp: sources and the lockfile, not the build, its staging or the generated types', async ({ dir }) => {
  const src = path.join(dir, 'console');
  const lock = path.join(dir, 'package-lock.json');
  await mkdir(path.join(src, 'src', 'api'), { recursive: true });
  await writeFile(path.join(src, 'index.html'), '<html></html>');
  await writeFile(path.join(src, 'src', 'main.tsx'), 'render()');
  await writeFile(lock, '{"lockfileVersion":3}');
  const first = sourceStamp(src, lock);
  assert.match(first ?? '', /^[0-9a-f]{64}$/);
  await mkdir(path.join(src, 'dist'), { recursive: true });
  await writeFile(path.join(src, 'dist', 'index.html'), 'built');
  await writeFile(path.join(src, 'src', 'api', 'schema.d.ts'), 'export interface paths {}');
  await mkdir(path.join(src, '.dist-1-2'), { recursive: true });
  await writeFile(path.join(src, '.dist-1-2', 'x.js'), 'x');
  assert.is(sourceStamp(src, lock), first, 'build output and generated types do not count');
  await writeFile(path.join(src, 'src', 'main.tsx'), 'render(app)');
  const edited = sourceStamp(src, lock);
  assert.is.not(edited, first, 'a source edit changes the stamp');
  await writeFile(lock, '{"lockfileVersion":3,"packages":{}}');
  assert.is.not(sourceStamp(src, lock), edited, 'a lockfile change changes the stamp');
  assert.is(sourceStamp(path.join(dir, 'nothing-here'), lock), null);

  assert.is(builtStamp(path.join(src, 'dist')), null, 'no stamp file: no build');
  await writeFile(path.join(src, 'dist', STAMP_FILE), `${edited}\n`);
  assert.is(builtStamp(path.join(src, 'dist')), edited);
});

test('serve logs one line for what it did: nothing when fresh, a warning when it cannot build', async () => {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', sink: (line) => lines.push(line) });
  await ensureConsoleBuilt(log, () => ({ action: 'serve', reason: 'fresh' }));
  assert.equal(lines, []);
  await ensureConsoleBuilt(log, () => ({ action: 'how_to_build', reason: 'missing_without_vite' }));
  await ensureConsoleBuilt(log, () => ({ action: 'serve_as_is', reason: 'stale_without_vite' }));
  assert.is(lines.length, 2);
  assert.match(lines[0]!, /console_not_built/);
  assert.match(lines[1]!, /console_stale/);
});

test.run();
