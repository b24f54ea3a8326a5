// The GIF proxy: GET /api/gifs/search?q=&limit=&pos= and GET /api/gifs/trending, answered from a
// GIPHY- or Tenor-speaking provider (CHATSVC_GIF_PROVIDER_URL, _KEY, _API) as
// `{results: [{id, title, url, preview_url, width, height}], next}`. The provider sees the
// server, never the user (no user header, address or id is forwarded); the key is never logged.
// Unconfigured: 503 `feature_disabled` naming the feature and the variable (after the 401).

import { createRoute, z } from '@hono/zod-openapi';
import { clampedInt, clampInt } from '../../shared/pagination.ts';
import type { ChatGifConfig } from '../../../infra/config.ts';
import { ok } from '../../shared/openapi.ts';
import { requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { coded } from '../files/upload.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';

const tags = ['gifs'];
const LIMIT_DEFAULT = 20;
const LIMIT_MAX = 50;
const TIMEOUT_MS = 5000;

const Gif = z
  .object({
    id: z.string(),
    title: z.string(),
    url: z.string(),
    preview_url: z.string(),
    width: z.number().int(),
    height: z.number().int(),
  })
  .openapi('Gif');
const GifPage = z
  .object({
    results: z.array(Gif),
    next: z.string().nullable().openapi({ description: 'pass as `pos` for the next page; null at the end' }),
  })
  .openapi('GifPage');
type Page = z.infer<typeof GifPage>;

const limitQuery = clampedInt({ default: LIMIT_DEFAULT, max: LIMIT_MAX });
const posQuery = z.string().max(200).optional().openapi({ description: 'the `next` of the previous page' });

const num = (v: unknown) => (Number.isFinite(Number(v)) ? Math.round(Number(v)) : 0);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** GIPHY: /v1/gifs/search and /v1/gifs/trending, `offset` paging. */
function giphyPage(body: any, offset: number): Page {
  const data: any[] = Array.isArray(body?.data) ? body.data : [];
  const results = data
    .map((g) => {
      const original = g?.images?.original ?? {};
      const preview = g?.images?.fixed_width_small ?? g?.images?.preview_gif ?? g?.images?.fixed_width ?? original;
      return {
        id: str(g?.id),
        title: str(g?.title),
        url: str(original.url),
        preview_url: str(preview.url),
        width: num(original.width),
        height: num(original.height),
      };
    })
    .filter((g) => g.id && g.url);
  const total = num(body?.pagination?.total_count);
  const next = offset + data.length;
  return { results, next: data.length && (!total || next < total) ? String(next) : null };
}

/** Tenor v2: /v2/search and /v2/featured, opaque `pos` paging. */
function tenorPage(body: any): Page {
  const data: any[] = Array.isArray(body?.results) ? body.results : [];
  const results = data
    .map((g) => {
      const gif = g?.media_formats?.gif ?? {};
      const tiny = g?.media_formats?.tinygif ?? g?.media_formats?.nanogif ?? gif;
      const dims: unknown[] = Array.isArray(gif.dims) ? gif.dims : [];
      return {
        id: str(g?.id),
        title: str(g?.title) || str(g?.content_description),
        url: str(gif.url),
        preview_url: str(tiny.url),
        width: num(dims[0]),
        height: num(dims[1]),
      };
    })
    .filter((g) => g.id && g.url);
  return { results, next: str(body?.next) || null };
}

async function ask(
  config: ChatGifConfig,
  kind: 'search' | 'trending',
  q: string,
  limit: number,
  pos: string | undefined,
): Promise<Page> {
  let url: URL;
  let offset = 0;
  if (config.api === 'giphy') {
    offset = clampInt(Number.parseInt(pos ?? '0', 10), { default: 0, min: 0, max: 4999 });
    url = new URL(`${config.url}/v1/gifs/${kind}`);
    url.searchParams.set('api_key', config.key);
    if (kind === 'search') url.searchParams.set('q', q);
    url.searchParams.set('limit', String(limit));
    url.searchParams.set('offset', String(offset));
    url.searchParams.set('rating', 'pg-13');
  } else {
    url = new URL(`${config.url}/v2/${kind === 'search' ? 'search' : 'featured'}`);
    url.searchParams.set('key', config.key);
    if (kind === 'search') url.searchParams.set('q', q);
    url.searchParams.set('limit', String(limit));
    if (pos) url.searchParams.set('pos', pos);
    url.searchParams.set('media_filter', 'gif,tinygif');
    url.searchParams.set('contentfilter', 'medium');
  }
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: 'application/json', 'user-agent': 'orchard-gif-proxy/1.0' },
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch {
    throw coded(502, 'upstream_failed', 'the GIF provider could not be reached');
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw coded(502, 'upstream_failed', `the GIF provider answered ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw coded(502, 'upstream_failed', 'the GIF provider answered something other than JSON');
  }
  return config.api === 'giphy' ? giphyPage(body, offset) : tenorPage(body);
}

export function gifRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const config = () => {
    if (!deps.config.gifs)
      throw coded(503, 'feature_disabled', 'GIF search is not configured on this server', {
        feature: 'gifs',
        env_var: 'CHATSVC_GIF_PROVIDER_URL',
      });
    return deps.config.gifs;
  };
  const errors = chatErrors({
    ...AUTH_ERRORS,
    400: 'validation error',
    502: 'upstream_failed: the provider failed',
    503: 'feature_disabled: no provider configured (`feature`, `env_var`)',
  });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/gifs/search',
      tags,
      summary: 'Search GIFs through the configured provider (it never sees the user)',
      middleware: [auth] as const,
      request: { query: z.object({ q: z.string().trim().min(1).max(100), limit: limitQuery, pos: posQuery }) },
      responses: { 200: ok(GifPage, 'a page of GIFs'), ...errors },
    }),
    async (c) => {
      const cfg = config();
      const { q, limit, pos } = c.req.valid('query');
      return c.json(await ask(cfg, 'search', q, limit, pos), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/gifs/trending',
      tags,
      summary: 'Trending GIFs from the configured provider',
      middleware: [auth] as const,
      request: { query: z.object({ limit: limitQuery, pos: posQuery }) },
      responses: { 200: ok(GifPage, 'a page of GIFs'), ...errors },
    }),
    async (c) => {
      const cfg = config();
      const { limit, pos } = c.req.valid('query');
      return c.json(await ask(cfg, 'trending', '', limit, pos), 200);
    },
  );

  return app;
}
