// Link previews: POST /api/link-preview `{url}` fetches the page through the SSRF guard
// (infra/outbound/guard.ts: the address checked inside the connection's DNS lookup, ports 80
// and 443, at most 5 redirects each checked again, 5 s, at most 1 MiB after decompression) and
// answers `{url, final_url, title, description, site_name, image}`. The page's `og:image` is
// fetched the same way (at most 2 MiB, a raster image) and served from here at GET
// /api/link-preview/images/{sha256}, so readers never touch the third party.
//
// Refusals are 422 with `code`: `destination_not_allowed`, `fetch_failed`, `timeout`,
// `too_large`, `unsupported_content`. No event is written (a preview decides nothing); answers
// are cached for an hour (lru-cache); URLs are never logged; 30 previews a minute per user.
//
// Images are swept by use (main/chat-files.ts): no record refers to them (the preview travels
// inside end-to-end-encrypted messages the server cannot read), so the last use is the only
// signal. A use is a preview answering with the image (fetched, found again, or from the cache)
// or the image being served; it is recorded as the file's modification time, at most once an
// hour per image. An image unused for PREVIEW_IMAGE_UNUSED_MS goes.

import { createRoute, z } from '@hono/zod-openapi';
import { LRUCache } from 'lru-cache';
import path from 'node:path';
import { Readable } from 'node:stream';
import { FilesystemBlobStore } from '../../../infra/files/store.ts';
import { guardedFetch, OutboundError } from '../../../infra/outbound/guard.ts';
import { rateLimited } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { blobResponses, serveBlob } from '../files/serve.ts';
import { coded, isRasterImage, sniff } from '../files/upload.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { decodeHtml, summarise } from './parse.ts';

const tags = ['link previews'];
const MiB = 1024 * 1024;
export const PREVIEW_LIMITS = {
  urlMax: 2048,
  pageBytes: MiB,
  imageBytes: 2 * MiB,
  timeoutMs: 5000,
  redirects: 5,
  perMinute: 30,
  cacheMs: 60 * 60 * 1000,
  cacheEntries: 5000,
};

const Preview = z
  .object({
    url: z.string(),
    final_url: z.string(),
    title: z.string().nullable(),
    description: z.string().nullable(),
    site_name: z.string().nullable(),
    image: z.string().nullable().openapi({
      description: "a path on this server (/api/link-preview/images/{sha256}), never the third party's URL",
    }),
  })
  .openapi('LinkPreview');
type PreviewBody = z.infer<typeof Preview>;

const HTML = new Set(['text/html', 'application/xhtml+xml']);

/** An image neither fetched nor served for this long is swept. A week, not the 24 h of an unreferenced upload: that grace starts when the last record lets go, this one at the last view, and a conversation reopened after a day should still show its previews. */
export const PREVIEW_IMAGE_UNUSED_MS = 7 * 24 * 60 * 60 * 1000;
/** Uses closer together than this are recorded once (a popular image costs no metadata write per view). */
const USE_RECORDED_EVERY_MS = 60 * 60 * 1000;
const IMAGE_PATH = /^\/api\/link-preview\/images\/([0-9a-f]{64})$/;

/** Where preview images live: a blob store of their own under the files directory. */
export const previewImageStore = (filesDir: string) => new FilesystemBlobStore(path.join(filesDir, 'link-previews'));

export function linkPreviewRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const policy = deps.config.outbound;
  const images = previewImageStore(deps.config.files.dir);
  const cache = new LRUCache<string, PreviewBody>({ max: PREVIEW_LIMITS.cacheEntries, ttl: PREVIEW_LIMITS.cacheMs });

  const fetchImage = async (raw: string, base: string): Promise<string | null> => {
    try {
      const url = new URL(raw, base);
      const fetched = await guardedFetch(url.toString(), {
        policy,
        maxBytes: PREVIEW_LIMITS.imageBytes,
        timeoutMs: PREVIEW_LIMITS.timeoutMs,
        maxRedirects: PREVIEW_LIMITS.redirects,
        accept: (t) => t.startsWith('image/') || t === 'application/octet-stream',
      });
      const received = await images.receive(Readable.from([fetched.body]), PREVIEW_LIMITS.imageBytes);
      if (!isRasterImage((await sniff(received.head)).mime)) {
        await images.discard(received);
        return null;
      }
      await images.commit(received, deps.clock.now());
      return `/api/link-preview/images/${received.sha256}`;
    } catch {
      return null; // a preview without its image
    }
  };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/link-preview',
      tags,
      summary: 'Preview a web page (Open Graph, then <title>)',
      description:
        `http or https, at most ${PREVIEW_LIMITS.urlMax} characters, ports 80 and 443. Private, loopback, link-local and other non-public destinations are refused, ` +
        `also after a redirect (at most ${PREVIEW_LIMITS.redirects}). ${PREVIEW_LIMITS.perMinute} a minute per user; answers are cached for an hour.`,
      middleware: [auth] as const,
      request: {
        body: jsonBody(
          z.strictObject({ url: z.string().min(1).max(PREVIEW_LIMITS.urlMax) }).openapi('LinkPreviewRequest'),
        ),
      },
      responses: {
        200: ok(Preview, 'the preview'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'not a URL',
          413: 'body too large',
          422: '`destination_not_allowed`, `fetch_failed`, `timeout`, `too_large` or `unsupported_content` (in `code`)',
          429: '30 previews a minute per user (Retry-After)',
        }),
      },
    }),
    async (c) => {
      const decision = await deps.limiter.consume(`chat:link-preview:${c.get('chatUser').user_id}`, {
        limit: PREVIEW_LIMITS.perMinute,
        windowMs: 60_000,
      });
      if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, 'too many link previews');
      let url: URL;
      try {
        url = new URL(c.req.valid('json').url);
      } catch {
        throw coded(400, 'validation_failed', 'url: not a URL');
      }
      url.hash = '';
      const key = url.toString();
      const cached = cache.get(key);
      if (cached) {
        const sha256 = cached.image?.match(IMAGE_PATH)?.[1];
        if (sha256) await images.touch(sha256, deps.clock.now(), USE_RECORDED_EVERY_MS);
        return c.json(cached, 200);
      }
      try {
        const page = await guardedFetch(key, {
          policy,
          maxBytes: PREVIEW_LIMITS.pageBytes,
          timeoutMs: PREVIEW_LIMITS.timeoutMs,
          maxRedirects: PREVIEW_LIMITS.redirects,
          accept: (t) => HTML.has(t),
          headers: { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.1' },
        });
        const summary = summarise(decodeHtml(page.body, page.contentType));
        const preview: PreviewBody = {
          url: key,
          final_url: page.finalUrl,
          title: summary.title,
          description: summary.description,
          site_name: summary.site_name,
          image: summary.image ? await fetchImage(summary.image, page.finalUrl) : null,
        };
        cache.set(key, preview);
        return c.json(preview, 200);
      } catch (error) {
        if (error instanceof OutboundError) throw coded(422, error.code, error.message);
        throw error;
      }
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/link-preview/images/{sha256}',
      tags,
      summary: "A preview's image, served from here",
      middleware: [auth] as const,
      request: { params: z.object({ sha256: z.string().openapi({ param: { name: 'sha256', in: 'path' } }) }) },
      responses: {
        ...blobResponses('the image', ['image/*']),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such image' }),
      },
    }),
    async (c) => {
      const { sha256 } = c.req.valid('param');
      const found = /^[0-9a-f]{64}$/.test(sha256) ? await images.head(sha256) : null;
      if (!found) throw coded(404, 'not_found', 'no such image');
      const now = deps.clock.now();
      if (now.getTime() - found.modified.getTime() >= USE_RECORDED_EVERY_MS) await images.touch(sha256, now);
      return serveBlob(c, images, {
        sha256,
        size: found.size,
        mime_type: (await sniff(found.head)).mime,
        name: null,
        inline: true,
      }) as never;
    },
  );

  return app;
}
