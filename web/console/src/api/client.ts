// The console's one way to call the server: openapi-fetch over the types generated from the
// orchestration OpenAPI document (schema.d.ts, see build.ts), so a renamed field fails the type
// check. Same-origin cookies only: no key or token is ever kept in localStorage or sessionStorage.
// Every write carries X-CSRF-Token (the readable `orch_csrf` cookie); a 401 outside /auth/ ends
// the session in the page and returns to sign-in, remembering where it was.

import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type SessionState = Schemas['SessionState'];
export type ApiErrorBody = Schemas['Error'] & { retry_after?: number };

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function cookie(name: string): string | null {
  for (const part of document.cookie.split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return null;
}

/** Told when a call outside /auth/ answers 401 (the session ended elsewhere, or expired). */
let onUnauthorized: () => void = () => {};
export const whenUnauthorized = (handler: () => void) => {
  onUnauthorized = handler;
};

const csrf: Middleware = {
  onRequest({ request }) {
    if (!SAFE.has(request.method)) {
      const token = cookie('orch_csrf');
      if (token) request.headers.set('X-CSRF-Token', token);
    }
    return request;
  },
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/auth/')) onUnauthorized();
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin, credentials: 'same-origin' });
api.use(csrf);
