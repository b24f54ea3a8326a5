// Driving the chat scheduler from a suite: fire what is due (on the platform's clock), let the
// reactors act, then wait until the projections have applied everything that appended.

import { chatBackground, type ChatBackground } from '../../main/chat-background.ts';
import type { Platform } from '../../main/platform.ts';

export async function settle(platform: Platform, background: ChatBackground): Promise<void> {
  // The events table is read directly: readers of the log see an append only once every older
  // transaction of the whole server has ended, which other suites can hold back for a while.
  const mark = (await platform.pool.query<{ p: string }>('SELECT coalesce(max(position), 0)::text AS p FROM events')).rows[0]!.p;
  const unposted = async () => Number((await platform.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM events d WHERE d.type = 'ScheduledMessageDelivered'
       AND NOT EXISTS (SELECT 1 FROM events m WHERE m.stream_id = 'chat_message-' || substring(d.stream_id from 24))`)).rows[0]!.n);
  const deadline = Date.now() + 30_000;
  do {
    await background.settle();
    if (Date.now() > deadline) throw new Error('settle: deliveries still unposted after 30 s');
  } while ((await unposted()) > 0);
  const { rows } = await platform.pool.query<{ type: string; txid: string; position: string }>(
    'SELECT type, transaction_id::text AS txid, position::text AS position FROM events WHERE position > $1', [mark]);
  await platform.engine.waitForEvents(rows.map((r) => ({ type: r.type, position: { commit: BigInt(r.txid), prepare: BigInt(r.position) } })), 30_000);
}

export const backgroundOf = (platform: Platform) => chatBackground(platform);

import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scheduledDecider, scheduledStream } from '../../domain/chat/scheduled/decider.ts';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/logging.ts';
import { mapLimit } from '../../infra/scheduler/scheduler.ts';
import { openPlatform } from '../../main/platform.ts';
import { SHARED_CHAT_ENV } from './chat-process.ts';

/** A platform on the database without projections or background work: for appending seeds. */
export async function seedingPlatform(databaseUrl: string, env: Record<string, string> = {}): Promise<Platform> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-seed-'));
  return openPlatform(loadConfig({ ...SHARED_CHAT_ENV, ...env, DATABASE_URL: databaseUrl, DATA_DIR: dataDir }), createLogger({ level: 'error', sink: () => {} }), { runProjections: false });
}

/** `count` scheduled messages from `senderId` in `channelId`, the i-th due at `sendAt(i)`, appended through the decider (as the route does). */
export async function seedScheduled(platform: Platform, channelId: string, senderId: string, count: number, sendAt: (i: number) => Date, concurrency = 16): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const at = new Date().toISOString();
  await mapLimit(ids.map((id, i) => [id, i] as const), concurrency, async ([id, i]) => {
    await platform.commands.run(scheduledStream(id), scheduledDecider, {
      type: 'Schedule', id, channel_id: channelId, sender_id: senderId, ciphertext: `seed-${i}`, send_at: sendAt(i).toISOString(), thread_root_id: null, mentions: [], file_ids: [], at,
    }, { actor: { kind: 'user', id: senderId }, correlationId: null }, { awaitProjections: false, known: { state: scheduledDecider.initialState(), revision: 'no_stream' } });
  });
  return ids;
}

/** How many MessagePosted events, and distinct message streams, the log holds for these ids. */
export async function postedCount(platform: Platform, ids: string[]): Promise<{ events: number; streams: number; delivered: number }> {
  const { rows } = await platform.pool.query<{ events: string; streams: string }>(
    `SELECT count(*) AS events, count(DISTINCT stream_id) AS streams FROM events WHERE type = 'MessagePosted' AND stream_id = ANY($1::text[])`, [ids.map((id) => `chat_message-${id}`)]);
  const delivered = await platform.pool.query<{ n: string }>(
    `SELECT count(*) AS n FROM events WHERE type = 'ScheduledMessageDelivered' AND stream_id = ANY($1::text[])`, [ids.map((id) => `chat_scheduled_message-${id}`)]);
  return { events: Number(rows[0]!.events), streams: Number(rows[0]!.streams), delivered: Number(delivered.rows[0]!.n) };
}
