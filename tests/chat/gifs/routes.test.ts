// The GIF proxy through real HTTP against local servers speaking GIPHY and Tenor: results and
// paging mapped to one shape; 401 before 503 `feature_disabled` when unconfigured; the provider
// sees the key and the query, never the user; the key is never logged; a failing provider 502.

import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { startSpaces } from '../../support/channel-world.ts';
import type { TestServices } from '../../support/services.ts';
import type { Spaces } from '../../support/spaces.ts';

const KEY = 'gif-key-5f0c3a9e71';
interface Seen {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}
interface Ctx {
  s: TestServices;
  sp: Spaces;
  user: ChatAccount;
  giphy: Server;
  tenor: Server;
  seen: Seen[];
  fail: boolean;
}
const test = suite<Ctx>('chat GIF proxy');

const giphyGif = (i: number) => ({
  id: `g${i}`,
  title: `Giphy ${i}`,
  images: {
    original: { url: `https://media.giphy.test/${i}.gif`, width: '480', height: '270' },
    fixed_width_small: { url: `https://media.giphy.test/${i}-s.gif`, width: '100', height: '56' },
  },
});
const tenorGif = (i: number) => ({
  id: `t${i}`,
  title: '',
  content_description: `Tenor ${i}`,
  media_formats: {
    gif: { url: `https://media.tenor.test/${i}.gif`, dims: [320, 240] },
    tinygif: { url: `https://media.tenor.test/${i}-tiny.gif`, dims: [160, 120] },
  },
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test.before(async (ctx) => {
  ctx.seen = [];
  ctx.fail = false;
  const record = (req: { url?: string; headers: IncomingHttpHeaders }) => {
    const url = new URL(req.url!, 'http://x');
    ctx.seen.push({ path: url.pathname, query: url.searchParams, headers: req.headers });
    return url;
  };
  ctx.giphy = createServer((req, res) => {
    const url = record(req);
    if (ctx.fail) return void res.writeHead(500).end();
    if (url.searchParams.get('api_key') !== KEY) return void res.writeHead(401).end();
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const limit = Number(url.searchParams.get('limit'));
    const data = Array.from({ length: Math.min(limit, 5 - offset) }, (_, i) => giphyGif(offset + i));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ data, pagination: { total_count: 5, count: data.length, offset } }));
  });
  ctx.tenor = createServer((req, res) => {
    const url = record(req);
    if (url.searchParams.get('key') !== KEY) return void res.writeHead(401).end();
    const pos = url.searchParams.get('pos');
    const results = pos ? [tenorGif(9)] : [tenorGif(1), tenorGif(2)];
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ results, next: pos ? '' : 'CAgQAA' }));
  });
  Object.assign(ctx, await startSpaces('chat_gifs'));
  ctx.user = await ctx.sp.register('gif');
});
test.after(async ({ s, giphy, tenor }) => {
  giphy?.close();
  tenor?.close();
  await s?.close();
});

test('unconfigured: 401 first, then 503 feature_disabled naming the variable', async ({ sp, user }) => {
  expectError(await sp.call(null, 'GET', '/api/gifs/trending'), 401);
  for (const path of ['/api/gifs/trending', '/api/gifs/search?q=cat']) {
    const r = await sp.call(user, 'GET', path);
    expectError(r, 503);
    assert.equal(
      [r.body.code, r.body.feature, r.body.env_var],
      ['feature_disabled', 'gifs', 'CHATSVC_GIF_PROVIDER_URL'],
    );
  }
});

test('GIPHY: search and trending in one shape, offset paging; the provider never sees the user; the key is not logged', async (ctx) => {
  await ctx.s.restart({
    CHATSVC_GIF_PROVIDER_URL: await listen(ctx.giphy),
    CHATSVC_GIF_PROVIDER_KEY: KEY,
    CHATSVC_GIF_PROVIDER_API: 'giphy',
  });
  ctx.user = await ctx.sp.register('gif2');
  const page = await ctx.sp.ok(ctx.user, 'GET', '/api/gifs/search?q=happy%20cat&limit=3');
  assert.equal(page.results[0], {
    id: 'g0',
    title: 'Giphy 0',
    url: 'https://media.giphy.test/0.gif',
    preview_url: 'https://media.giphy.test/0-s.gif',
    width: 480,
    height: 270,
  });
  assert.equal([page.results.length, page.next], [3, '3']);
  const last = await ctx.sp.ok(ctx.user, 'GET', `/api/gifs/search?q=happy%20cat&limit=3&pos=${page.next}`);
  assert.equal([last.results.map((g: { id: string }) => g.id), last.next], [['g3', 'g4'], null]);
  const search = ctx.seen.find((x) => x.path === '/v1/gifs/search')!;
  assert.equal([search.query.get('q'), search.query.get('limit'), search.query.get('offset')], ['happy cat', '3', '0']);
  const trending = await ctx.sp.ok(ctx.user, 'GET', '/api/gifs/trending?limit=500');
  assert.is(trending.results.length, 5);
  assert.is(ctx.seen.at(-1)!.path, '/v1/gifs/trending');
  assert.is(ctx.seen.at(-1)!.query.get('limit'), '50', 'limit clamped to 50');
  for (const seen of ctx.seen) {
    assert.not.ok(seen.headers.authorization, 'no user credential upstream');
    assert.not.ok(
      JSON.stringify(seen.headers).includes(ctx.user.id) || seen.query.toString().includes(ctx.user.id),
      'no user id upstream',
    );
    assert.not.ok(seen.headers['x-forwarded-for']);
  }
  assert.not.ok(
    ctx.s.logLines.some((l) => l.includes(KEY)),
    'the key is never logged',
  );
  expectError(await ctx.sp.call(ctx.user, 'GET', '/api/gifs/search'), 400);
  ctx.fail = true;
  const down = await ctx.sp.call(ctx.user, 'GET', '/api/gifs/trending');
  expectError(down, 502);
  assert.is(down.body.code, 'upstream_failed');
  ctx.fail = false;
});

test('Tenor: v2 search and featured, pos paging', async (ctx) => {
  await ctx.s.restart({ CHATSVC_GIF_PROVIDER_URL: await listen(ctx.tenor), CHATSVC_GIF_PROVIDER_API: 'tenor' });
  ctx.user = await ctx.sp.register('gif3');
  const page = await ctx.sp.ok(ctx.user, 'GET', '/api/gifs/search?q=dog');
  assert.equal(page.results[0], {
    id: 't1',
    title: 'Tenor 1',
    url: 'https://media.tenor.test/1.gif',
    preview_url: 'https://media.tenor.test/1-tiny.gif',
    width: 320,
    height: 240,
  });
  assert.is(page.next, 'CAgQAA');
  const next = await ctx.sp.ok(ctx.user, 'GET', `/api/gifs/search?q=dog&pos=${page.next}`);
  assert.equal([next.results.map((g: { id: string }) => g.id), next.next], [['t9'], null]);
  assert.is(ctx.seen.at(-1)!.query.get('pos'), 'CAgQAA');
  await ctx.sp.ok(ctx.user, 'GET', '/api/gifs/trending');
  assert.is(ctx.seen.at(-1)!.path, '/v2/featured');
  assert.is(ctx.seen.at(-1)!.query.get('key'), KEY);
  assert.not.ok(ctx.s.logLines.some((l) => l.includes(KEY)));
});

test.run();
