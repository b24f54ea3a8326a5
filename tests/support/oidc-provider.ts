// A real OpenID Connect provider for the registry's sign-in suites: `oidc-provider` on a loopback
// port with one confidential client, PKCE required, a `groups` claim, and its development
// interactions (a login form that takes any account id, then a consent form). `signIn` drives
// those forms like a browser would and returns the redirect back to the relying party.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Follow an authorization URL through login and consent as `account`; returns the redirect to the client. */
  signIn(authorizationUrl: string, account: string): Promise<URL>;
  close(): Promise<void>;
}

/** Accounts and their groups. */
export type Directory = Record<string, { email: string; name: string; groups: string[] }>;

export async function startTestProvider(redirectUri: string, directory: Directory): Promise<TestProvider> {
  let handler: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void = (_q, r) =>
    r.end();
  const server: Server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = 'registry-test';
  const clientSecret = 'registry-test-secret-0123456789abcdef';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    cookies: { keys: ['test-provider-cookie-key'] },
    async findAccount(_ctx, id) {
      const entry = directory[id];
      if (!entry) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: entry.email,
          email_verified: true,
          name: entry.name,
          preferred_username: id,
          groups: entry.groups,
        }),
      };
    },
  });
  // Quiet: the provider warns about development interactions on purpose.
  provider.on('server_error', () => {});
  const callback = provider.callback();
  // Not awaited: Koa's request handler does not reject, it answers a failure itself (ctx.onerror).
  handler = (req, res) => void callback(req, res);

  async function signIn(authorizationUrl: string, account: string): Promise<URL> {
    const jar = new Map<string, string>();
    const remember = (res: Response) => {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        const name = pair!.slice(0, eq);
        const value = pair!.slice(eq + 1);
        if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') jar.delete(name);
        else jar.set(name, value);
      }
    };
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let url = new URL(authorizationUrl);
    for (let step = 0; step < 12; step++) {
      if (url.origin !== issuer) return url;
      let res = await fetch(url, { redirect: 'manual', headers: { cookie: cookie() } });
      remember(res);
      if (res.status === 200) {
        const html = await res.text();
        const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
        const form: Record<string, string> =
          prompt === 'login' ? { prompt, login: account, password: 'any' } : { prompt: prompt ?? 'consent' };
        res = await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(form).toString(),
        });
        remember(res);
      }
      const location = res.headers.get('location');
      if (!location)
        throw new Error(
          `provider answered ${res.status} without a redirect at ${url}: ${(await res.text()).slice(0, 300)}`,
        );
      url = new URL(location, url);
    }
    throw new Error('sign-in did not come back to the client');
  }

  return {
    issuer,
    clientId,
    clientSecret,
    signIn,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
