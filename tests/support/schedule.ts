// Driving the chat scheduler from a suite: fire what is due (on the platform's clock), let the
// reactors act, then wait until the projections have applied everything that appended.

import { chatBackground, type ChatBackground } from '../../main/chat-background.ts';
import type { Platform } from '../../main/platform.ts';

export async function settle(platform: Platform, background: ChatBackground): Promise<void> {
  if (logOnEsdb) return settleOnStore(platform, background);
  // The events table is read directly: readers of the log see an append only once every older
  // transaction of the whole server has ended, which other suites can hold back for a while.
  const mark = (await platform.pool.query<{ p: string }>('SELECT coalesce(max(position), 0)::text AS p FROM events'))
    .rows[0]!.p;
  const unposted = async () =>
    Number(
      (
        await platform.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM events d WHERE d.type = 'ScheduledMessageDelivered'
       AND NOT EXISTS (SELECT 1 FROM events m WHERE m.stream_id = $1 || substring(d.stream_id from $2::int))`,
          [CHAT_STREAMS.message.prefix, CHAT_STREAMS.scheduled_message.prefix.length + 1],
        )
      ).rows[0]!.n,
    );
  await postedAll(background, unposted);
  const { rows } = await platform.pool.query<{ type: string; txid: string; position: string }>(
    'SELECT type, transaction_id::text AS txid, position::text AS position FROM events WHERE position > $1',
    [mark],
  );
  await platform.engine.waitForEvents(
    rows.map((r) => ({ type: r.type, position: { commit: BigInt(r.txid), prepare: BigInt(r.position) } })),
    30_000,
  );
}

/** `settle` with the log on EventStoreDB (TEST_LOG=esdb): the same steps, read through the store (no visibility gate there). */
async function settleOnStore(platform: Platform, background: ChatBackground): Promise<void> {
  const mark = (await platform.store.headPosition()) ?? 'start';
  const unposted = async () => {
    const events = await loggedEvents(platform, { eventTypes: ['ScheduledMessageDelivered', 'MessagePosted'] });
    const posted = new Set(events.filter((e) => e.type === 'MessagePosted').map((e) => e.stream));
    return events.filter(
      (e) =>
        e.type === 'ScheduledMessageDelivered' &&
        !posted.has(messageStream(e.stream.slice(CHAT_STREAMS.scheduled_message.prefix.length))),
    ).length;
  };
  await postedAll(background, unposted);
  const appended = await platform.store.readAll({ after: mark, limit: 100_000 });
  await platform.engine.waitForEvents(
    appended.map((e) => ({ type: e.type, position: e.position })),
    30_000,
  );
}

/** Fire and react until no delivery is left unposted (30 s at most). */
const postedAll = (background: ChatBackground, unposted: () => Promise<number>) =>
  until(
    'settle: every delivery posted',
    async () => {
      await background.settle();
      return (await unposted()) === 0;
    },
    30_000,
    0,
  );

export const backgroundOf = (platform: Platform) => chatBackground(platform);

import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scheduledDecider } from '../../domain/chat/scheduled/decider.ts';
import { CHAT_STREAMS, scheduledStream, messageStream } from '../../domain/chat/streams.ts';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/logging.ts';
import { mapLimit } from '../../infra/scheduler/scheduler.ts';
import { openPlatform } from '../../main/platform.ts';
import { SHARED_CHAT_ENV } from './chat-process.ts';
import { loggedEvents } from './services.ts';
import { logOnEsdb, testLogEnv } from './test-log.ts';
import { until } from './until.ts';

/** A platform on the database without projections or background work: for appending seeds. */
export async function seedingPlatform(databaseUrl: string, env: Record<string, string> = {}): Promise<Platform> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-seed-'));
  return openPlatform(
    loadConfig({
      ...SHARED_CHAT_ENV,
      ...env,
      DATABASE_URL: databaseUrl,
      ...(await testLogEnv(databaseUrl)),
      DATA_DIR: dataDir,
    }),
    createLogger({ level: 'error', sink: () => {} }),
    { runProjections: false },
  );
}

/** `count` scheduled messages from `senderId` in `channelId`, the i-th due at `sendAt(i)`, appended through the decider (as the route does). */
export async function seedScheduled(
  platform: Platform,
  channelId: string,
  senderId: string,
  count: number,
  sendAt: (i: number) => Date,
  concurrency = 16,
): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const at = new Date().toISOString();
  await mapLimit(
    ids.map((id, i) => [id, i] as const),
    concurrency,
    async ([id, i]) => {
      await platform.commands.run(
        scheduledStream(id),
        scheduledDecider,
        {
          type: 'Schedule',
          id,
          channel_id: channelId,
          sender_id: senderId,
          ciphertext: `seed-${i}`,
          send_at: sendAt(i).toISOString(),
          thread_root_id: null,
          mentions: [],
          file_ids: [],
          at,
        },
        { actor: { kind: 'user', id: senderId }, correlationId: null },
        { awaitProjections: false, known: { state: scheduledDecider.initialState(), revision: 'no_stream' } },
      );
    },
  );
  return ids;
}

/** How many MessagePosted events, and distinct message streams, the log holds for these ids (read through the store: either log serves). */
export async function postedCount(
  platform: Platform,
  ids: string[],
): Promise<{ events: number; streams: number; delivered: number }> {
  // One pass over the log's events of the two types (a read per stream would be 2,000 reads a poll).
  const wanted = new Set(ids.flatMap((id) => [messageStream(id), scheduledStream(id)]));
  const events = (await loggedEvents(platform, { eventTypes: ['MessagePosted', 'ScheduledMessageDelivered'] })).filter(
    (e) => wanted.has(e.stream),
  );
  const posted = events.filter((e) => e.type === 'MessagePosted');
  return {
    events: posted.length,
    streams: new Set(posted.map((e) => e.stream)).size,
    delivered: events.filter((e) => e.type === 'ScheduledMessageDelivered').length,
  };
}
