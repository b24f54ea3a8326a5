// A local web-push service for suites: an HTTP server that records each push (path, headers,
// body) and answers 201, or the status a test sets for a path (404, 410). A "browser" is a P-256
// key pair and an auth secret made with node:crypto; its pushes are decrypted with http_ece
// (aes128gcm), and the VAPID header's ES256 JWT is verified against the server's public key.

import { createECDH, createPublicKey, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import ece from 'http_ece';
import { until } from './until.ts';

export interface Browser {
  ecdh: ECDH;
  auth: Buffer;
  keys: { p256dh: string; auth: string };
}

export function browser(): Browser {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return { ecdh, auth, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } };
}

export interface Pushed {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export class PushService {
  readonly received: Pushed[] = [];
  /** Status to answer per path (default 201). */
  readonly status = new Map<string, number>();
  private server!: Server;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        this.received.push({ path: req.url!, headers: req.headers, body: Buffer.concat(parts) });
        res.writeHead(this.status.get(req.url!) ?? 201).end();
      });
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  url(path: string): string {
    return `${this.origin}${path}`;
  }

  to(path: string): Pushed[] {
    return this.received.filter((p) => p.path === path);
  }

  /** Wait until `path` has received `count` pushes (20 s at most by default). */
  async waitFor(path: string, count: number, timeoutMs = 20_000): Promise<Pushed[]> {
    await until(
      () => `${count} pushes to ${path} (${this.to(path).length} so far)`,
      async () => this.to(path).length >= count,
      timeoutMs,
      100,
    );
    return this.to(path);
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}

/** The push's cleartext, decrypted as the browser's service worker would. */
export function decrypt(push: Pushed, b: Browser): string {
  return ece.decrypt(push.body, { version: 'aes128gcm', privateKey: b.ecdh, authSecret: b.auth }).toString('utf8');
}

/** Verify `Authorization: vapid t=<jwt>, k=<key>` against `publicKey`; the JWT's claims. */
export function vapidClaims(push: Pushed, publicKey: string): { aud: string; exp: number; sub: string } {
  const match = /^vapid t=([^,\s]+),\s*k=(\S+)$/.exec(String(push.headers.authorization ?? ''));
  if (!match) throw new Error(`not a VAPID authorization: ${push.headers.authorization}`);
  const [, jwt, k] = match;
  if (k !== publicKey) throw new Error("the VAPID k is not the server's public key");
  const [h, p, s] = jwt!.split('.');
  const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
  if (header.alg !== 'ES256') throw new Error(`alg ${header.alg}`);
  const point = Buffer.from(publicKey, 'base64url');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  });
  if (!verify('sha256', Buffer.from(`${h}.${p}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s!, 'base64url')))
    throw new Error('bad VAPID signature');
  return JSON.parse(Buffer.from(p!, 'base64url').toString());
}

/**
 * Let the push sender handle everything appended so far: drain it until its checkpoint passes
 * the last event it follows. (Readers of the log see an append only once every older
 * transaction on the server has ended, which other suites can hold back for a while.)
 */
export async function settlePush(
  pool: { query(sql: string, values?: unknown[]): Promise<{ rows: any[] }> },
  pusher: { drain(): Promise<number> },
  timeoutMs = 30_000,
): Promise<void> {
  const mark = BigInt(
    (
      await pool.query(`SELECT coalesce(max(position), 0)::text AS p FROM events WHERE type = ANY($1::text[])`, [
        ['MeetingReminderFired', 'MessagePosted'],
      ])
    ).rows[0].p,
  );
  await until(
    'settlePush: the push sender at the last event',
    async () => {
      await pusher.drain();
      const row = (
        await pool.query(`SELECT prepare_pos::text AS p FROM chat_reactor_checkpoints WHERE name = 'web_push_sender'`)
      ).rows[0];
      return row && BigInt(row.p) >= mark;
    },
    timeoutMs,
    100,
  );
}
