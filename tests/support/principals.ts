// Principals for end-to-end suites, made through the real API: accounts created by the admin,
// browser sessions from /auth/login (with their CSRF cookie), the runner from its configured key.

import { randomUUID } from 'node:crypto';
import { http, type Reply, type TestServices } from './services.ts';

export interface Account {
  id: string;
  username: string;
  email: string;
  password: string;
  apiKey: string;
  role: 'admin' | 'user' | 'readonly';
}

export interface Session {
  cookie: string;
  csrf: string;
  sessionId: string;
}

export async function createAccount(
  s: TestServices,
  adminKey: string,
  role: Account['role'],
  name = `${role}-${randomUUID().slice(0, 8)}`,
): Promise<Account> {
  const password = `pw-${randomUUID()}`;
  const email = `${name}@example.test`;
  const r = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { 'X-API-Key': adminKey },
    json: { username: name, email, role, password },
  });
  if (r.status !== 201) throw new Error(`create account: ${r.status} ${r.text}`);
  return { id: r.body.id, username: name, email, password, apiKey: r.body.api_key, role };
}

/** Cookies set by a response, as name → value. */
export function setCookies(reply: Reply): Record<string, { value: string; attributes: string }> {
  const out: Record<string, { value: string; attributes: string }> = {};
  for (const line of reply.headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(';');
    const eq = pair!.indexOf('=');
    out[pair!.slice(0, eq).trim()] = {
      value: decodeURIComponent(pair!.slice(eq + 1).trim()),
      attributes: attributes.join(';'),
    };
  }
  return out;
}

export async function login(s: TestServices, account: { email: string; password: string }): Promise<Session> {
  const r = await http(`${s.orch}/auth/login`, { json: { email: account.email, password: account.password } });
  if (r.status !== 200) throw new Error(`login: ${r.status} ${r.text}`);
  const cookies = setCookies(r);
  const sessionId = cookies.orch_sess!.value;
  const csrf = cookies.orch_csrf!.value;
  return { sessionId, csrf, cookie: `orch_sess=${sessionId}; orch_csrf=${csrf}` };
}

/** Headers of a same-origin browser request carrying the session and its CSRF token. */
export function browser(s: TestServices, session: Session): Record<string, string> {
  return { cookie: session.cookie, 'x-csrf-token': session.csrf, origin: s.orch, 'sec-fetch-site': 'same-origin' };
}
