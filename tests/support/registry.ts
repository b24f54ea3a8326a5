// Principals for registry suites, made through the real API: interactive users through
// forward-auth headers from a trusted peer (with their CSRF token from GET /api/v1/auth/me),
// machine tokens minted by an admin through POST /api/v1/admin/tokens.

import { http, loggedEvents, type TestServices } from './services.ts';

/** Forward-auth from the in-process default peer (127.0.0.1) is trusted. */
export const REGISTRY_ENV = { REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32,::1/128' };
export const ADMIN_GROUP = 'registry-admin';

export interface Interactive {
  /** Headers of a same-origin browser request with the CSRF token (what writes need). */
  headers: Record<string, string>;
  csrf: string;
}

/** An interactive user through forward-auth: `admin` in the admin group, else read-only. */
export async function interactive(s: TestServices, name: string, role: 'admin' | 'readonly'): Promise<Interactive> {
  const identity = {
    'X-Idp-Username': name,
    'X-Idp-Groups': role === 'admin' ? `staff|${ADMIN_GROUP}` : 'staff',
    'X-Idp-Email': `${name}@example.test`,
  };
  const me = await http(`${s.registry}/api/v1/auth/me`, { headers: identity });
  if (me.status !== 200) throw new Error(`auth/me: ${me.status} ${me.text}`);
  const csrf = me.body.csrf_token as string;
  return {
    csrf,
    headers: {
      ...identity,
      cookie: `registry_csrf=${csrf}`,
      'x-csrf-token': csrf,
      origin: s.registry,
      'sec-fetch-site': 'same-origin',
    },
  };
}

export interface MintedToken {
  id: string;
  token: string;
  headers: Record<string, string>;
}

export async function mintToken(
  s: TestServices,
  admin: Interactive,
  scopes: string[],
  extra: Record<string, unknown> = {},
): Promise<MintedToken> {
  const r = await http(`${s.registry}/api/v1/admin/tokens`, {
    headers: admin.headers,
    json: { name: `t-${scopes.join('+') || 'none'}`.slice(0, 100), scopes, ...extra },
  });
  if (r.status !== 201) throw new Error(`mint token: ${r.status} ${r.text}`);
  return { id: r.body.id, token: r.body.token, headers: { authorization: `Bearer ${r.body.token}` } };
}

/** Events in the log (for "nothing written on a refusal"). */
export async function eventCount(s: TestServices): Promise<number> {
  return (await loggedEvents(s)).length;
}
