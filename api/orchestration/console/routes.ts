// Serving the web console (web/console/dist, built by web/console/build.ts) from the
// orchestration service:
//
// - `GET /` and client routes (GET or HEAD, outside /api, /auth, /ws and /metrics, accepting
//   HTML) get index.html, `Cache-Control: no-cache` with an ETag; a request that does not accept
//   HTML falls through to the JSON 404 (so `/api/unknown` and scripts stay JSON).
// - `/assets/*`: hashed names, `immutable` for a year; the .br or .gz made at build time when the
//   client accepts it. An unknown asset is the JSON 404.
// - Other files at the build's root (favicon.svg): `no-cache`.
// - No build: `/` says how to build (503).
//
// Every console response carries a strict CSP (no inline script or style), nosniff and
// Referrer-Policy: same-origin. This is middleware, not an API route: it is not in the OpenAPI
// document.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Context, MiddlewareHandler } from 'hono';
import { CONSOLE_DIST } from './build-stamp.ts';

export const CONSOLE_CSP = "default-src 'self'; img-src 'self' data: blob:; frame-ancestors 'none'; base-uri 'none'";

export const CONSOLE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
};

const RESERVED = ['/api', '/auth', '/ws', '/metrics'];
export const reservedPath = (p: string) => RESERVED.some((r) => p === r || p.startsWith(`${r}/`));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

const FILE_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Whether `Accept-Encoding` admits `coding` (a q of 0 refuses it). */
export function acceptsEncoding(header: string | undefined, coding: 'br' | 'gzip'): boolean {
  for (const part of (header ?? '').split(',')) {
    const [name, ...params] = part
      .trim()
      .split(';')
      .map((s) => s.trim());
    if (name?.toLowerCase() !== coding && name !== '*') continue;
    const q = params.find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  }
  return false;
}

// A browser navigation asks for HTML; an Accept of any type alone (a script, curl) does not get the page.
const acceptsHtml = (c: Context) => (c.req.header('accept') ?? '').toLowerCase().includes('text/html');

const howToBuild = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Console not built · Orchard</title></head>
<body>
<main>
<h1>The web console is not built</h1>
<p>This server's API works (<a href="/api/v1/health">/api/v1/health</a>); its browser console has not been built yet.</p>
<p>In a checkout: run <code>npm install</code> (its <code>prepare</code> step builds the console) or <code>npm run build:console</code>, then restart the server.
With Vite installed, <code>npm start</code> builds a missing or stale console by itself before listening.</p>
<p>A container image builds the console in its own build stage (see the Dockerfile).</p>
</main>
</body>
</html>
`;

async function fileIfAny(file: string): Promise<string | null> {
  try {
    return (await stat(file)).isFile() ? file : null;
  } catch {
    return null;
  }
}

export function consoleRoutes(options: { dist?: string } = {}): MiddlewareHandler {
  const dist = options.dist ?? CONSOLE_DIST;
  const assets = path.join(dist, 'assets');

  const respond = (c: Context, body: Uint8Array | string | null, status: number, headers: Record<string, string>) => {
    const all = { ...CONSOLE_HEADERS, ...headers };
    if (c.req.method === 'HEAD' || body === null) return c.body(null, status as 200, all);
    return c.body(typeof body === 'string' ? body : new Uint8Array(body), status as 200, all);
  };

  async function asset(c: Context, name: string): Promise<Response | null> {
    if (!FILE_NAME.test(name) || name.endsWith('.br') || name.endsWith('.gz')) return null;
    const file = await fileIfAny(path.join(assets, name));
    if (!file) return null;
    const type = TYPES[path.extname(name)] ?? 'application/octet-stream';
    const headers: Record<string, string> = {
      'Content-Type': type,
      'Cache-Control': 'public, max-age=31536000, immutable',
      Vary: 'Accept-Encoding',
    };
    const accept = c.req.header('accept-encoding');
    for (const [coding, suffix] of [
      ['br', '.br'],
      ['gzip', '.gz'],
    ] as const) {
      if (acceptsEncoding(accept, coding) && existsSync(file + suffix)) {
        return respond(c, await readFile(file + suffix), 200, { ...headers, 'Content-Encoding': coding });
      }
    }
    return respond(c, await readFile(file), 200, headers);
  }

  async function index(c: Context): Promise<Response> {
    const file = await fileIfAny(path.join(dist, 'index.html'));
    if (!file)
      return respond(c, howToBuild, 503, {
        'Content-Type': 'text/html; charset=utf-8',
        'Cache-Control': 'no-store',
        Vary: 'Accept',
      });
    const body = await readFile(file);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
    const headers = {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-cache',
      ETag: etag,
      Vary: 'Accept',
    };
    if (c.req.header('if-none-match') === etag) return respond(c, null, 304, headers);
    return respond(c, body, 200, headers);
  }

  return async (c, next) => {
    const method = c.req.method;
    const p = c.req.path;
    if ((method !== 'GET' && method !== 'HEAD') || reservedPath(p)) return next();
    if (p.startsWith('/assets/')) return (await asset(c, p.slice('/assets/'.length))) ?? next();
    if (p === '/') return index(c);
    // A file at the build's root (favicon.svg): served as is, revalidated.
    const name = p.slice(1);
    if (FILE_NAME.test(name) && name !== 'index.html' && !name.startsWith('.')) {
      const file = await fileIfAny(path.join(dist, name));
      if (file)
        return respond(c, await readFile(file), 200, {
          'Content-Type': TYPES[path.extname(name)] ?? 'application/octet-stream',
          'Cache-Control': 'no-cache',
        });
    }
    if (acceptsHtml(c)) return index(c);
    return next();
  };
}
