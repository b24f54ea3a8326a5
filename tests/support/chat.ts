// Chat clients for route and end-to-end suites: real keys from the e2ee library, registered
// through the real API, with their tokens.

import { randomUUID } from 'node:crypto';
import {
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  type IdentityKeyPair,
  type OneTimePrekey,
  type SignedPrekey,
} from '../../crypto/e2ee/index.ts';
import { http, type Reply } from './services.ts';

export const wire = (data: Uint8Array): number[] => Array.from(data);

export interface ClientKeys {
  identity: IdentityKeyPair;
  signedPrekey: SignedPrekey;
  oneTimePrekeys: OneTimePrekey[];
}

export function clientKeys(oneTime = 5, firstKeyId = 1): ClientKeys {
  const identity = generateIdentityKeyPair();
  return {
    identity,
    signedPrekey: generateSignedPrekey(identity, 1),
    oneTimePrekeys: generateOneTimePrekeys(firstKeyId, oneTime),
  };
}

export function registrationBody(name: string, keys: ClientKeys, extra: Record<string, unknown> = {}) {
  return {
    username: name,
    email: `${name.toLowerCase()}@example.test`,
    password: `pw-${name}-long-enough`,
    identity_key: wire(keys.identity.publicKey),
    signed_prekey: {
      key_id: keys.signedPrekey.keyId,
      public_key: wire(keys.signedPrekey.publicKey),
      signature: wire(keys.signedPrekey.signature),
    },
    one_time_prekeys: keys.oneTimePrekeys.map((k) => ({ key_id: k.keyId, public_key: wire(k.publicKey) })),
    ...extra,
  };
}

export interface ChatAccount {
  id: string;
  username: string;
  password: string;
  access: string;
  refresh: string;
  recovery: string;
  keys: ClientKeys;
  user: Record<string, unknown>;
}

export const bearer = (account: { access: string }) => ({ authorization: `Bearer ${account.access}` });

export const uniqueName = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '').slice(0, 10)}`;

export async function registerChat(
  base: string,
  name = uniqueName('u'),
  options: { oneTime?: number; extra?: Record<string, unknown>; peer?: string } = {},
): Promise<ChatAccount> {
  const keys = clientKeys(options.oneTime ?? 5);
  const body = registrationBody(name, keys, options.extra);
  const r = await http(`${base}/api/auth/register`, { json: body, ...(options.peer ? { peer: options.peer } : {}) });
  if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${r.text}`);
  return {
    id: r.body.user.id,
    username: name,
    password: body.password,
    access: r.body.access_token,
    refresh: r.body.refresh_token,
    recovery: r.body.recovery_code,
    keys,
    user: r.body.user,
  };
}

export async function eventCount(pool: {
  query(sql: string): Promise<{ rows: { count: string }[] }>;
}): Promise<number> {
  return Number((await pool.query('SELECT count(*) FROM events')).rows[0]!.count);
}

export function expectError(r: Reply, status: number): void {
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  if (typeof r.body?.error !== 'string') throw new Error(`error body without a description: ${r.text}`);
}
