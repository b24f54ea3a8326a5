// Chat-service connector figures, against the real chat and orchestration services on loopback
// (one process, the local model):
//
// - chatsvc_dm_reply_ms p50/p99: from a human's post of an encrypted DM to the bot's reply
//   decrypted by the human (the bot decrypts, commits its ratchet state, runs the grounded chat
//   pipeline, encrypts and posts); baseline: the same human's post until its own MessageCreated
//   arrives on its socket (the chat service's round trip alone), as `ratio`.
// - chatsvc_channel_scan_msgs_per_s: channel messages without a mention, decrypted (sender
//   keys), committed (handled mark, receiver state, cursor) and classified by the bot, in
//   process; baseline: decryptGroup alone on the same messages, as `ratio`.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BotSocket } from '../api/orchestration/chatsvc/bot.ts';
import { setReplyMode } from '../api/orchestration/profiles/commands.ts';
import {
  createInitiatorSession,
  createSenderKey,
  createSenderKeyReceiver,
  decryptDm,
  decryptGroup,
  encryptDm,
  encryptGroup,
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  senderKeyDistribution,
} from '../crypto/e2ee/index.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { chatsvcConnector, orchDeps } from '../main/apps.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { integrationOf } from '../projections/orchestration/chatsvc.ts';
import type { Figure } from './figure.ts';
import { percentile } from './http.ts';
import WebSocket from 'ws';
import { BENCH_POOL_ENV } from './pools.ts';

const round = (value: number, digits = 0) => Number(value.toFixed(digits));
const wire = (b: Uint8Array) => Array.from(b);
const enc = (s: string) => new TextEncoder().encode(s);
const SECRET = 'bench-bootstrap-secret-0123456789abcdef';
const ADMIN = 'orch_bench-connector-admin-key-000000000';

export interface ConnectorBenchOptions {
  dmReplies?: number;
  scanMessages?: number;
  progress?: (message: string) => void;
}

export async function connectorFigures(databaseUrl: string, options: ConnectorBenchOptions = {}): Promise<Figure[]> {
  const progress = options.progress ?? (() => {});
  // The bot's token may make 60 requests per 10 s (the chat's default): the DMs are paced under it.
  const replies = options.dmReplies ?? 100;
  const scan = options.scanMessages ?? 3000;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-connector-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c5'.repeat(32),
    ORCH_INTEGRATION_ENCRYPTION_KEY: 'c6'.repeat(32),
    ADMIN_API_KEY: ADMIN,
    CHATSVC_BOOTSTRAP_SECRET: SECRET,
    ORCH_LISTEN: '127.0.0.1:0',
    CHATSVC_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    CHATSVC_AUTH_RATE_PER_MIN: '100000000',
    CHATSVC_API_RATE_PER_SEC: '100000000',
    ORCH_PUBLIC_CHAT_RPM: '100000000',
  });
  const platform = await openPlatform(
    config,
    createLogger({
      level: process.env.BENCH_DEBUG ? 'debug' : 'error',
      sink: (line) => {
        if (process.env.BENCH_DEBUG) process.stderr.write(line + '\n');
      },
    }),
  );
  const running = await startServices(platform, ['chat', 'orch']);
  const chat = running.find((r) => r.name === 'chat')!.url;
  const orch = running.find((r) => r.name === 'orch')!.url;
  const call = async (base: string, method: string, route: string, headers: Record<string, string>, body?: unknown) => {
    const r = await fetch(`${base}${route}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${route}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
  const figures: Figure[] = [];
  try {
    progress('connector: a community, a human, a profile with a snippet, the bot connected');
    const identity = generateIdentityKeyPair();
    const spk = generateSignedPrekey(identity, 1);
    const human = await call(
      chat,
      'POST',
      '/api/auth/register',
      {},
      {
        username: 'bench_human',
        email: 'bench_human@bench.test',
        password: 'bench-password-human',
        identity_key: wire(identity.publicKey),
        signed_prekey: { key_id: 1, public_key: wire(spk.publicKey), signature: wire(spk.signature) },
        one_time_prekeys: generateOneTimePrekeys(1, 5).map((p) => ({ key_id: p.keyId, public_key: wire(p.publicKey) })),
      },
    );
    const auth = { authorization: `Bearer ${human.access_token}` };
    const humanId = human.user.id as string;
    const cid = (await call(chat, 'POST', '/api/communities', auth, { name: 'Bench' })).id as string;
    const gid = (await call(chat, 'POST', '/api/groups', auth, { community_id: cid, name: 'bench' })).id as string;
    const chid = (await call(chat, 'POST', `/api/groups/${gid}/channels`, auth, { name: 'general' })).id as string;
    const key = { 'x-api-key': ADMIN };
    const profile = await call(orch, 'POST', '/api/v1/agent-chat/profiles', key, {
      slug: 'bench-bot',
      name: 'Bench Bot',
      rate_limit_rpm: 100000,
      rate_limit_rpd: 10000000,
    });
    await call(orch, 'POST', `/api/v1/bots/${profile.id}/knowledge`, key, {
      title: 'Office hours',
      content: 'The office opens at nine and closes at five.',
    });
    await setReplyMode(orchDeps(platform), 'bench-bot', 'both', {
      actor: { kind: 'system', id: 'bench' },
      correlationId: null,
    });
    const provision = (
      await call(chat, 'POST', '/api/admin/bots/bootstrap-token', { 'x-provision-bootstrap-secret': SECRET })
    ).token.token;
    const connected = await call(orch, 'POST', `/api/v1/agents/${profile.id}/chatsvc/connect`, key, {
      instance_url: chat,
      provision_token: provision,
      bot_username: 'bench_bot',
      display_name: 'Bench Bot',
      default_community_id: cid,
    });
    const botId = connected.bot_user_id as string;
    for (
      let i = 0;
      i < 200 && (await call(orch, 'GET', `/api/v1/agents/${profile.id}/chatsvc`, key)).socket.state !== 'connected';
      i++
    )
      await new Promise((r) => setTimeout(r, 50));

    // --- the human's socket ------------------------------------------------------------------
    const socket = new WebSocket(`${chat.replace(/^http/, 'ws')}/api/ws`);
    const waiting = new Map<string, (m: any) => void>();
    let onOwn: ((m: any) => void) | null = null;
    socket.on('message', (data) => {
      const f = JSON.parse(String(data));
      if (f.type !== 'MessageCreated') return;
      if (f.message.sender_id === botId) waiting.get(f.channel_id)?.(f.message);
      else if (f.message.sender_id === humanId) onOwn?.(f.message);
    });
    await new Promise((r) => socket.once('open', r));
    socket.send(JSON.stringify({ type: 'Authenticate', token: human.access_token }));
    await new Promise((r) => setTimeout(r, 200));
    const dm = (await call(chat, 'POST', '/api/dms', auth, { user_id: botId })).id as string;
    socket.send(JSON.stringify({ type: 'Subscribe', channel_id: dm }));
    await new Promise((r) => setTimeout(r, 300));
    const bundle = await call(chat, 'GET', `/api/keys/${botId}/bundle`, auth);
    const session = createInitiatorSession({ publicKey: identity.publicKey, secretKey: identity.secretKey }, bundle);

    // --- baseline: the chat round trip alone ---------------------------------------------------
    progress(`chat_post_roundtrip: ${replies} posts`);
    // A channel of the human alone (the bot does not hear it).
    const solo = (await call(chat, 'POST', '/api/channels', auth, { name: 'solo' })).id as string;
    const baseline: number[] = [];
    for (let i = 0; i < replies; i++) {
      const started = performance.now();
      const seen = new Promise((r) => (onOwn = r));
      await call(chat, 'POST', `/api/channels/${solo}/messages`, auth, { ciphertext: 'x'.repeat(200) });
      if (i === 0) socket.send(JSON.stringify({ type: 'Subscribe', channel_id: solo }));
      if (i > 0) await seen;
      baseline.push(performance.now() - started);
    }

    // --- chatsvc_dm_reply_ms ---------------------------------------------------------------------
    progress(`chatsvc_dm_reply: ${replies} DMs`);
    const latencies: number[] = [];
    for (let i = 0; i < replies; i++) {
      const started = performance.now();
      const reply = new Promise<any>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no reply to DM ${i} within 15 s`)), 15_000);
        waiting.set(dm, (m) => {
          clearTimeout(timer);
          resolve(m);
        });
      });
      await call(chat, 'POST', `/api/channels/${dm}/messages`, auth, {
        ciphertext: JSON.stringify(encryptDm(session, enc(`When does the office open? (${i})`))),
      });
      const message = await reply;
      const text = new TextDecoder().decode(decryptDm(session, JSON.parse(message.ciphertext)));
      if (!text.includes('nine')) throw new Error(`ungrounded reply: ${text}`);
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, Math.max(0, 200 - (performance.now() - started))));
    }
    socket.close();
    const base50 = percentile(baseline.slice(1), 50);
    figures.push({
      name: 'chatsvc_dm_reply_p50',
      value: round(percentile(latencies, 50), 1),
      unit: 'ms',
      baseline: 'chat_post_roundtrip_p50',
      ratio: round(percentile(latencies, 50) / base50, 2),
    });
    figures.push({ name: 'chatsvc_dm_reply_p99', value: round(percentile(latencies, 99), 1), unit: 'ms' });
    figures.push({ name: 'chat_post_roundtrip_p50', value: round(base50, 1), unit: 'ms' });

    // --- chatsvc_channel_scan_msgs_per_s ----------------------------------------------------------
    progress(`chatsvc_channel_scan: ${scan} channel messages without a mention`);
    const connector = chatsvcConnector(platform);
    const row = (await integrationOf(platform.pool, profile.id))!;
    await connector.supervisor.stopBot(profile.id);
    const bot = new BotSocket(connector, row);
    const sender = createSenderKey(humanId);
    const distribution = senderKeyDistribution(sender);
    await connector.store!.saveReceiver(row.integration_id, chid, createSenderKeyReceiver(distribution), new Date());
    const messages = Array.from({ length: scan }, (_, i) => ({
      id: randomUUID(),
      channel_id: chid,
      sender_id: humanId,
      thread_root_id: null,
      created_at: new Date().toISOString(),
      via_webhook: false,
      ciphertext: JSON.stringify(
        encryptGroup(sender, enc(`status update ${i}: the build is green, nobody needs the bot here`)),
      ),
    }));
    const receiver = createSenderKeyReceiver(distribution);
    const t0 = performance.now();
    for (const m of messages) decryptGroup(receiver, JSON.parse(m.ciphertext));
    const decryptOnly = scan / ((performance.now() - t0) / 1000);
    const t1 = performance.now();
    // As the socket drains them under load: batches of what arrived while earlier work ran (at most 200).
    for (let next = 0; next < messages.length; next += 200)
      await bot.inbox.handleMany(messages.slice(next, next + 200));
    const perSecond = scan / ((performance.now() - t1) / 1000);
    figures.push({
      name: 'chatsvc_channel_scan_msgs_per_s',
      value: round(perSecond),
      unit: 'messages/s',
      baseline: 'decrypt_group_only',
      ratio: round(perSecond / decryptOnly, 3),
    });
  } finally {
    await Promise.all(running.map((r) => r.close()));
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}
