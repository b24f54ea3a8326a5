// Managed-update fixtures: a release signing key, manifests signed with it, a manifest host (a
// real HTTP server on loopback serving channels and artifacts), signed sidecar requests, and a
// stub of the three services' health routes.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateReleaseKeyPair, signEnvelope, type DsseEnvelope } from '../../crypto/release-signature.ts';
import { newNonce, signRequest, signResponse, signatureMatches } from '../../crypto/request-signature.ts';
import { hexToBytes } from '@noble/hashes/utils.js';

export const TOKEN_TEXT = 'test-sidecar-token-0123456789abcdef-0123456789';
export const TOKEN = new TextEncoder().encode(TOKEN_TEXT);

export interface ReleaseKeys {
  secretKey: Uint8Array;
  publicKeyHex: string;
  dir: string;
  publicKeyFile: string;
  tokenFile: string;
}

export async function releaseKeys(): Promise<ReleaseKeys> {
  const { secretKeyHex, publicKeyHex } = generateReleaseKeyPair();
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-release-'));
  const publicKeyFile = path.join(dir, 'release.pub');
  const tokenFile = path.join(dir, 'updater_token');
  await writeFile(publicKeyFile, publicKeyHex + '\n');
  await writeFile(tokenFile, TOKEN_TEXT + '\n', { mode: 0o600 });
  return { secretKey: hexToBytes(secretKeyHex), publicKeyHex, dir, publicKeyFile, tokenFile };
}

export function payload(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema: 1,
    channel: 'stable',
    version: '9.0.0',
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    image: { repository: 'registry.example/orchard', digest: `sha256:${'ab'.repeat(32)}` },
    artifact: { url: 'http://127.0.0.1:9/orchard-9.0.0.tar.gz', sha256: 'cd'.repeat(32) },
    migrations: ['001_events'],
    requirements: [],
    ...overrides,
  };
}

export const sign = (keys: { secretKey: Uint8Array }, body: Record<string, unknown> | string): DsseEnvelope =>
  signEnvelope(new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)), keys.secretKey);

/** A loopback HTTP server: `routes` maps a path to [status, body, content type]. */
export class StaticHost {
  readonly routes = new Map<string, { status: number; body: string | Uint8Array; type?: string }>();
  readonly hits: string[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.hits.push(req.url ?? '');
      const route = this.routes.get((req.url ?? '').split('?')[0]!);
      if (!route) {
        res.writeHead(404).end('not found');
        return;
      }
      res.writeHead(route.status, { 'content-type': route.type ?? 'application/json' }).end(route.body);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  channel(name: string, envelope: unknown, status = 200): void {
    this.routes.set(`/channels/${name}.json`, {
      status,
      body: typeof envelope === 'string' ? envelope : JSON.stringify(envelope),
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A request to the sidecar signed with `token`; `tamper` changes it after signing. */
export async function signedFetch(
  base: string,
  method: string,
  pathAndQuery: string,
  json?: unknown,
  options: {
    token?: Uint8Array;
    timestamp?: number;
    nonce?: string;
    tamper?: (h: Record<string, string>) => void;
    body?: string;
  } = {},
) {
  const token = options.token ?? TOKEN;
  const body = options.body ?? (json === undefined ? '' : JSON.stringify(json));
  const timestamp = String(options.timestamp ?? Math.floor(Date.now() / 1000));
  const nonce = options.nonce ?? newNonce();
  const headers: Record<string, string> = {
    'x-orchard-timestamp': timestamp,
    'x-orchard-nonce': nonce,
    'x-orchard-signature': signRequest(token, { method, pathAndQuery, timestamp, nonce, body }),
    ...(body ? { 'content-type': 'application/json' } : {}),
  };
  options.tamper?.(headers);
  const res = await fetch(base + pathAndQuery, { method, headers, body: body || undefined });
  const text = await res.text();
  const responseSigned = signatureMatches(
    signResponse(token, {
      status: res.status,
      requestNonce: nonce,
      timestamp: res.headers.get('x-orchard-timestamp') ?? '',
      body: text,
    }),
    res.headers.get('x-orchard-signature'),
  );
  return { status: res.status, body: text ? JSON.parse(text) : null, responseSigned, nonce };
}

/** The three services' health routes, answering as `state` says (for the executor's probes). */
export class FakeServices extends StaticHost {
  version = '1.0.0';
  migration = '001_events';
  readOnly = true;
  healthy = true;

  override async start(): Promise<this> {
    await super.start();
    const self = this;
    const dynamic = (make: () => { status: number; body: unknown }) => ({
      get status() {
        return make().status;
      },
      get body() {
        return JSON.stringify(make().body);
      },
    });
    const maintenance = () => ({ active: true, read_only: self.readOnly });
    this.routes.set(
      '/api/v1/health',
      dynamic(() => ({
        status: self.healthy ? 200 : 503,
        body: { status: 'ok', version: self.version, maintenance: maintenance() },
      })) as never,
    );
    this.routes.set(
      '/api/v1/health/db',
      dynamic(() => ({
        status: 200,
        body: { status: 'ok', migrations_applied: 1, latest_migration: self.migration },
      })) as never,
    );
    this.routes.set(
      '/api/health',
      dynamic(() => ({ status: 200, body: { status: 'ok', db_healthy: true, maintenance: maintenance() } })) as never,
    );
    this.routes.set(
      '/health',
      dynamic(() => ({ status: 200, body: { status: 'ok', maintenance: maintenance() } })) as never,
    );
    return this;
  }
}
