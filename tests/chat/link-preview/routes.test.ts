// Link previews through real HTTP against local servers: a page server (Open Graph, <title>,
// redirects, a redirect loop, a slow page, a huge page, a gzip bomb, JSON, a 500, an image) and
// a local DNS server (dns2, CHATSVC_DNS_SERVERS) answering private, link-local, mixed, mapped
// and NAT64 addresses. Every such destination is refused, directly and after a redirect; the
// image is served from here; answers are cached; 30 a minute per user; no event; no URL logged.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import dns2 from 'dns2';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { png } from '../../support/multipart.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';
import { existsSync } from 'node:fs';
import { utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { previewImageStore } from '../../../api/chat/link-preview/routes.ts';
import { sweepChatFiles } from '../../../main/chat-files.ts';

const PAGE = `<!doctype html><html><head>
<meta property="og:title" content="The &amp; Garden">
<meta property="og:description" content="  Roses,
  <b>tulips</b> and &#x263A; ">
<meta property="og:site_name" content="Orchard">
<meta property="og:image" content="/img.png">
<title>ignored</title></head><body>hi</body></html>`;
const IMAGE = png(77, 4, 4);

interface Ctx {
  s: TestServices;
  sp: Spaces;
  user: ChatAccount;
  web: Server;
  dns: any;
  port: number;
  hits: Record<string, number>;
}
const test = suite<Ctx>('chat link previews');

const RECORDS: Record<string, { A?: string[]; AAAA?: string[] }> = {
  'site.test': { A: ['127.0.0.1'] },
  'private.test': { A: ['10.0.0.5'] },
  'linklocal.test': { A: ['169.254.169.254'] },
  'mixed.test': { A: ['93.184.216.34', '192.168.1.10'] },
  'mapped.test': { AAAA: ['::ffff:10.0.0.1'] },
  'mappedloop.test': { AAAA: ['::ffff:127.0.0.1'] },
  'nat64.test': { AAAA: ['64:ff9b::a9fe:a9fe'] },
  'v6local.test': { AAAA: ['fe80::1'] },
  'cgnat.test': { A: ['100.64.1.1'] },
};

test.before(async (ctx) => {
  ctx.hits = {};
  ctx.web = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    ctx.hits[url.pathname] = (ctx.hits[url.pathname] ?? 0) + 1;
    switch (url.pathname) {
      case '/page':
        return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      case '/title':
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<html><head><title>  Plain &amp; simple\n title </title><meta name="description" content="d"></head></html>',
          );
      case '/img.png':
        return void res.writeHead(200, { 'content-type': 'image/png' }).end(IMAGE);
      case '/redirect':
        return void res.writeHead(302, { location: url.searchParams.get('to')! }).end();
      case '/loop':
        return void res.writeHead(301, { location: '/loop' }).end();
      case '/slow':
        return void setTimeout(
          () => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>late</title>'),
          8000,
        );
      case '/huge': {
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<title>big</title>' + 'x'.repeat(2 * 1024 * 1024));
      }
      case '/huge-chunked': {
        res.writeHead(200, { 'content-type': 'text/html', 'transfer-encoding': 'chunked' });
        for (let i = 0; i < 40; i++) res.write('y'.repeat(64 * 1024));
        return void res.end();
      }
      case '/bomb': {
        // 64 MiB of zeros, about 64 KiB gzipped.
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        return void res.end(zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024)));
      }
      case '/gzip-ok': {
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        return void res.end(zlib.gzipSync('<title>zipped</title>'));
      }
      case '/json':
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      default:
        return void res.writeHead(500).end('no');
    }
  });
  await new Promise<void>((r) => ctx.web.listen(0, '127.0.0.1', r));
  ctx.port = (ctx.web.address() as AddressInfo).port;
  const { Packet } = dns2;
  ctx.dns = dns2.createServer({
    udp: true,
    handle: ((request: any, send: (r: unknown) => void) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const record = RECORDS[question.name.toLowerCase()];
      const type = question.type === Packet.TYPE.AAAA ? 'AAAA' : question.type === Packet.TYPE.A ? 'A' : null;
      for (const address of (type && record?.[type]) ?? [])
        response.answers.push({
          name: question.name,
          type: Packet.TYPE[type!],
          class: Packet.CLASS.IN,
          ttl: 1,
          address,
        } as never);
      send(response);
    }) as never,
  });
  await ctx.dns.listen({ udp: { port: 0, address: '127.0.0.1' } });
  const dnsPort = ctx.dns.addresses().udp.port;
  ctx.s = await startTestApps('chat_link_preview', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    NODE_ENV: 'test',
    CHATSVC_OUTBOUND_ALLOW_LOOPBACK: '1',
    CHATSVC_DNS_SERVERS: `127.0.0.1:${dnsPort}`,
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.user = await ctx.sp.register('prev');
});
test.after(async ({ s, web, dns }) => {
  web?.closeAllConnections();
  web?.close();
  await dns?.close();
  await s?.close();
});

const preview = (ctx: Ctx, url: string, who: ChatAccount = ctx.user) => {
  ctx.s.clock.advance(3000); // 30 a minute: keep the suite under it
  return ctx.sp.call(who, 'POST', '/api/link-preview', { url });
};
const refusedWith = async (ctx: Ctx, url: string, code: string) => {
  const r = await preview(ctx, url);
  expectError(r, 422);
  assert.is(r.body.code, code, `${url}: ${r.text}`);
};

test('a page: Open Graph fields as plain text; the image fetched and served from here; cached', async (ctx) => {
  const url = `http://site.test:${ctx.port}/page#frag`;
  const r = await preview(ctx, url);
  assert.is(r.status, 200, r.text);
  assert.equal(
    [r.body.url, r.body.final_url, r.body.title, r.body.description, r.body.site_name],
    [
      `http://site.test:${ctx.port}/page`,
      `http://site.test:${ctx.port}/page`,
      'The & Garden',
      'Roses, tulips and ☺',
      'Orchard',
    ],
  );
  assert.match(r.body.image, /^\/api\/link-preview\/images\/[0-9a-f]{64}$/);
  const img = await http(`${ctx.s.chat}${r.body.image}`, { headers: { authorization: `Bearer ${ctx.user.access}` } });
  assert.equal(
    [img.status, img.headers.get('content-type'), img.headers.get('cache-control')],
    [200, 'image/png', 'private'],
  );
  expectError(await http(`${ctx.s.chat}${r.body.image}`), 401);
  expectError(await ctx.sp.call(ctx.user, 'GET', `/api/link-preview/images/${'0'.repeat(64)}`), 404);
  const pageHits = ctx.hits['/page'];
  assert.equal((await preview(ctx, url)).body, r.body);
  assert.is(ctx.hits['/page'], pageHits, 'the second answer came from the cache');
  const t = await preview(ctx, `http://site.test:${ctx.port}/title`);
  assert.equal(
    [t.body.title, t.body.description, t.body.site_name, t.body.image],
    ['Plain & simple title', 'd', null, null],
  );
  assert.is((await preview(ctx, `http://site.test:${ctx.port}/gzip-ok`)).body.title, 'zipped');
  // A redirect within the rules is followed.
  const moved = await preview(ctx, `http://site.test:${ctx.port}/redirect?to=/title`);
  assert.equal([moved.status, moved.body.final_url], [200, `http://site.test:${ctx.port}/title`]);
});

test('destinations refused by their DNS answers: private, link-local, CGNAT, mixed, mapped, NAT64, IPv6 link-local', async (ctx) => {
  for (const name of ['private', 'linklocal', 'cgnat', 'mixed', 'mapped', 'mappedloop', 'nat64', 'v6local']) {
    await refusedWith(ctx, `http://${name}.test:${ctx.port}/page`, 'destination_not_allowed');
    await refusedWith(ctx, `http://${name}.test/page`, 'destination_not_allowed');
  }
  await refusedWith(ctx, 'http://169.254.169.254/latest/meta-data', 'destination_not_allowed');
  await refusedWith(ctx, 'http://[::ffff:a9fe:a9fe]/', 'destination_not_allowed');
  await refusedWith(ctx, 'file:///etc/passwd', 'destination_not_allowed');
  await refusedWith(ctx, 'gopher://site.test/', 'destination_not_allowed');
  await refusedWith(ctx, 'http://nowhere.test/', 'fetch_failed');
});

test('the same after a redirect: each hop is checked again', async (ctx) => {
  const hop = (to: string) => `http://site.test:${ctx.port}/redirect?to=${encodeURIComponent(to)}`;
  for (const to of [
    `http://private.test:${ctx.port}/page`,
    'http://linklocal.test/',
    'http://169.254.169.254/latest',
    `http://mapped.test:${ctx.port}/`,
    'http://[fe80::1]/',
    `http://nat64.test/`,
  ]) {
    await refusedWith(ctx, hop(to), 'destination_not_allowed');
  }
  const before = ctx.hits['/page'] ?? 0;
  await refusedWith(ctx, hop(hop(hop(`http://private.test:${ctx.port}/page`))), 'destination_not_allowed');
  assert.is(ctx.hits['/page'] ?? 0, before);
});

test('limits: redirect loops, non-HTML, errors, huge pages, a gzip bomb, a slow page', async (ctx) => {
  await refusedWith(ctx, `http://site.test:${ctx.port}/loop`, 'fetch_failed');
  await refusedWith(ctx, `http://site.test:${ctx.port}/json`, 'unsupported_content');
  await refusedWith(ctx, `http://site.test:${ctx.port}/missing`, 'fetch_failed');
  await refusedWith(ctx, `http://site.test:${ctx.port}/huge`, 'too_large');
  await refusedWith(ctx, `http://site.test:${ctx.port}/huge-chunked`, 'too_large');
  await refusedWith(ctx, `http://site.test:${ctx.port}/bomb`, 'too_large');
  await refusedWith(ctx, `http://site.test:${ctx.port}/slow`, 'timeout');
  expectError(await preview(ctx, 'not a url'), 400);
  expectError(await preview(ctx, `http://site.test/${'a'.repeat(2048)}`), 400);
  expectError(await ctx.sp.call(null, 'POST', '/api/link-preview', { url: 'http://site.test/' }), 401);
});

test('30 previews a minute per user, then 429 with Retry-After; no event; no URL in the logs', async (ctx) => {
  const hurried = await ctx.sp.register('hurry');
  const eventsBefore = (await ctx.s.db.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n;
  const url = `http://site.test:${ctx.port}/title`;
  for (let i = 0; i < 30; i++)
    assert.is((await ctx.sp.call(hurried, 'POST', '/api/link-preview', { url })).status, 200);
  const r = await ctx.sp.call(hurried, 'POST', '/api/link-preview', { url });
  expectError(r, 429);
  assert.ok(Number(r.headers.get('retry-after')) >= 1);
  const eventsAfter = (await ctx.s.db.pool.query('SELECT count(*)::int AS n FROM events')).rows[0].n;
  assert.is(eventsAfter, eventsBefore, 'previews write nothing to the log');
  assert.not.ok(
    ctx.s.logLines.some((l) => l.includes('site.test') || l.includes('private.test')),
    'no URL is logged',
  );
});

// Last: it moves the clock by weeks.
test('preview images unused for a week are swept: a view or a preview (cached too) counts as a use; stale temp files go', async (ctx) => {
  const DAY = 24 * 60 * 60 * 1000;
  const url = `http://site.test:${ctx.port}/page?sweep`; // not cached yet: the image is fetched (again) now
  const files = previewImageStore(ctx.s.platform.config.chat.files.dir);
  const sweep = async () => (await sweepChatFiles(ctx.s.platform)).previewImages;
  const later = async (ms: number) => {
    ctx.s.clock.advance(ms);
    return ctx.sp.register('sweeper'); // a token issued on the moved clock
  };
  const first = await preview(ctx, url);
  assert.is(first.status, 200, first.text);
  const sha256 = first.body.image.split('/').at(-1) as string;
  assert.ok(await files.exists(sha256));
  assert.equal(await sweep(), [], 'just fetched');

  let viewer = await later(6 * DAY);
  assert.is((await ctx.sp.call(viewer, 'GET', first.body.image)).status, 200); // a view: used now
  viewer = await later(6 * DAY);
  assert.equal(await sweep(), [], 'viewed six days ago');
  assert.equal((await ctx.sp.call(viewer, 'POST', '/api/link-preview', { url })).body, first.body); // the cached answer: used now
  await later(6 * DAY);
  assert.equal(await sweep(), [], 'previewed six days ago');

  // A stale temp file (an interrupted fetch) goes too.
  const stale = path.join(files.dir, 'tmp', 'interrupted');
  await writeFile(stale, 'x');
  const old = new Date(ctx.s.clock.now().getTime() - 2 * 60 * 60 * 1000);
  await utimes(stale, old, old);

  viewer = await later(DAY + 60 * 60 * 1000); // a week and an hour unused
  assert.equal(await sweep(), [sha256]);
  assert.not.ok(await files.exists(sha256));
  assert.not.ok(existsSync(stale));
  expectError(await ctx.sp.call(viewer, 'GET', first.body.image), 404);
});

test.run();
