// Chat bots and webhooks figures, against a real chat server on loopback:
//
// - bot_request_auth: requests per second authenticated with a bot token (X-Bot-Token: hash,
//   cached token row, per-token limit) as a ratio to the same requests with a JWT access token,
//   measured in alternating slices of the same run (8 workers each, GET /api/communities);
//   target ≥ 0.8;
// - webhook_execute: messages per second posted through 50 webhooks, each held to the spec's
//   one message a second (each worker posts, then waits out the rest of its second): the
//   ceiling is 50/s, the figure says whether the server keeps it.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateIdentityKeyPair, generateSignedPrekey } from '../crypto/e2ee/index.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import type { Figure } from './figure.ts';
import { paired, throughput, type Operation } from './measure.ts';
import { BENCH_POOL_ENV } from './pools.ts';

const round = (value: number, digits = 0) => Number(value.toFixed(digits));
const wire = (b: Uint8Array) => Array.from(b);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ChatBotsBenchOptions {
  seconds?: number;
  webhooks?: number;
  progress?: (message: string) => void;
}

export async function chatBotsFigures(databaseUrl: string, options: ChatBotsBenchOptions = {}): Promise<Figure[]> {
  const seconds = options.seconds ?? 4;
  const hooks = options.webhooks ?? 50;
  const progress = options.progress ?? (() => {});
  const figures: Figure[] = [];
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-bots-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c5'.repeat(32),
    CHATSVC_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    CHATSVC_AUTH_RATE_PER_MIN: '100000000',
    CHATSVC_API_RATE_PER_SEC: '100000000',
  });
  const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
  const [chat] = await startServices(platform, ['chat']);
  const base = chat!.url;
  const call = async (method: string, route: string, headers: Record<string, string>, body?: unknown, expect = 300) => {
    const r = await fetch(`${base}${route}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (r.status >= expect) throw new Error(`${method} ${route}: ${r.status} ${text}`);
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  try {
    progress('bots: an owner, a community, a channel, a bot with a token');
    const identity = generateIdentityKeyPair();
    const spk = generateSignedPrekey(identity, 1);
    const owner = (
      await call(
        'POST',
        '/api/auth/register',
        {},
        {
          username: 'bench_owner',
          email: 'owner@bench.test',
          password: 'bench-password-owner',
          identity_key: wire(identity.publicKey),
          signed_prekey: { key_id: 1, public_key: wire(spk.publicKey), signature: wire(spk.signature) },
          one_time_prekeys: [],
        },
      )
    ).body;
    const jwt = { authorization: `Bearer ${owner.access_token}` };
    const cid = (await call('POST', '/api/communities', jwt, { name: 'Bench' })).body.id as string;
    const gid = (await call('POST', '/api/groups', jwt, { community_id: cid, name: 'bench' })).body.id as string;
    const chid = (await call('POST', `/api/groups/${gid}/channels`, jwt, { name: 'hooks' })).body.id as string;
    const bot = (await call('POST', '/api/admin/bots', jwt, { username: 'bench_bot' })).body;
    await call('POST', `/api/admin/bots/${bot.id}/communities`, jwt, { community_id: cid });
    const token = (await call('POST', `/api/admin/bots/${bot.id}/tokens`, jwt, { rate_limit_per_window: 100_000 })).body
      .token as string;
    const botHeaders = { 'x-bot-token': token };

    // --- bot_request_auth vs JWT, paired ----------------------------------------------------------
    progress(`bot_request_auth: 8 workers each, JWT and bot token in alternating slices (${seconds * 2}s)`);
    const workers = (headers: Record<string, string>): Operation[] =>
      Array.from({ length: 8 }, () => async () => {
        await call('GET', '/api/communities', headers);
        return 1;
      });
    const [viaJwt, viaBot] = await paired(workers(jwt), workers(botHeaders), {
      warmupMs: seconds * 250,
      measureMs: seconds * 2000,
      slices: 8,
    });
    figures.push({ name: 'jwt_request_auth', value: round(viaJwt.perSecond), unit: 'requests/s' });
    figures.push({
      name: 'bot_request_auth',
      value: round(viaBot.perSecond),
      unit: 'requests/s',
      baseline: 'jwt_request_auth',
      ratio: round(viaBot.perSecond / viaJwt.perSecond, 2),
    });

    // --- webhook_execute across 50 webhooks ---------------------------------------------------------
    progress(`webhook_execute: ${hooks} webhooks, one message a second each (${seconds}s)`);
    const tokens: string[] = [];
    for (let i = 0; i < hooks; i++)
      tokens.push(
        (await call('POST', `/api/channels/${chid}/webhooks`, jwt, { name: `hook ${i}` })).body.token as string,
      );
    const posters: Operation[] = tokens.map((t, i) => async () => {
      const started = Date.now();
      const r = await call(
        'POST',
        `/api/webhooks/execute/${t}`,
        {},
        { content: `build ${i} passed for @bench_owner` },
        500,
      );
      await sleep(Math.max(0, 1005 - (Date.now() - started)));
      return r.status === 201 ? 1 : 0;
    });
    const executed = await throughput(posters, { warmupMs: 1500, measureMs: seconds * 1000 });
    figures.push({ name: `webhook_execute_${hooks}webhooks`, value: round(executed.perSecond, 1), unit: 'messages/s' });
  } finally {
    await chat!.close();
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}
