// Chat spaces figures, against a real chat server on loopback:
//
// - message_post: messages posted per second by 8 posters (each its own member) into one
//   channel, each a command on its own stream waited through to the read model;
// - history_page: p99 ms of GET /api/channels/{id}/messages?before=&limit=50 on a channel of
//   1,000,000 messages, at random depths. The million rows are written straight into the read
//   model (chat_messages, with log positions in order): the figure measures the read path, and
//   posting a million messages through the API would take the bench's whole budget;
// - ws_fanout: MessageCreated events delivered per second to 500 sockets subscribed to one
//   channel (sockets in a child process, 10 members with 50 sockets each), while 4 posters post.

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { channelWithMembers, chatCaller } from './chat-channel.ts';
import type { Figure } from './figure.ts';
import { percentile } from './http.ts';
import { throughput, type Operation } from './measure.ts';
import { BENCH_POOL_ENV } from './pools.ts';

const WS_CLIENTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'spaces-ws-clients.ts');
const round = (value: number, digits = 0) => Number(value.toFixed(digits));

export interface SpacesBenchOptions {
  seconds?: number;
  historyMessages?: number;
  fanoutSockets?: number;
  progress?: (message: string) => void;
}

export async function spacesFigures(databaseUrl: string, options: SpacesBenchOptions = {}): Promise<Figure[]> {
  const seconds = options.seconds ?? 4;
  const progress = options.progress ?? (() => {});
  const figures: Figure[] = [];
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-spaces-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c4'.repeat(32),
    CHATSVC_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    CHATSVC_AUTH_RATE_PER_MIN: '100000000',
    CHATSVC_API_RATE_PER_SEC: '100000000',
  });
  const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
  const [chat] = await startServices(platform, ['chat']);
  const base = chat!.url;
  const call = chatCaller(base);
  try {
    progress('spaces: a community, a group, a channel and 18 members');
    const { owner, groupId: gid, channelId: chid, members } = await channelWithMembers(call, 18);
    const ciphertext = 'x'.repeat(200);

    // --- message_post: 8 posters -----------------------------------------------------------
    progress(`message_post: 8 posters (${seconds}s)`);
    const posters: Operation[] = members.slice(0, 8).map((m) => async () => {
      await call('POST', `/api/channels/${chid}/messages`, m.token, { ciphertext });
      return 1;
    });
    const posted = await throughput(posters, { warmupMs: seconds * 250, measureMs: seconds * 1000 });
    figures.push({ name: 'message_post_8posters', value: round(posted.perSecond), unit: 'messages/s' });

    // --- history_page: p99 on a channel of 1,000,000 messages ----------------------------------
    const total = options.historyMessages ?? 1_000_000;
    const big = (await call('POST', `/api/groups/${gid}/channels`, owner.token, { name: 'history' })).id as string;
    progress(`history_page: writing ${total} messages into the read model`);
    const ids: string[] = [];
    for (let from = 0; from < total; from += 100_000) {
      const { rows } = await platform.pool.query<{ id: string }>(
        `INSERT INTO chat_messages (id, channel_id, sender_id, ciphertext, created_at, log_commit, log_prepare)
         SELECT gen_random_uuid(), $1, $2, $3, now() - make_interval(secs => $4 - i), 1, i FROM generate_series($5::bigint, $6::bigint) AS i
         RETURNING id`,
        [big, owner.id, ciphertext, total, from + 1, Math.min(total, from + 100_000)],
      );
      for (let k = 0; k < rows.length; k += 997) ids.push(rows[k]!.id);
    }
    await platform.pool.query('ANALYZE chat_messages');
    const latencies: number[] = [];
    const pages = 1000;
    progress(`history_page: ${pages} pages at random depths, 4 readers`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < pages) {
          const i = next++;
          const before = i % 10 === 0 ? '' : `&before=${ids[Math.floor(Math.random() * ids.length)]}`;
          const started = performance.now();
          const page = await call('GET', `/api/channels/${big}/messages?limit=50${before}`, owner.token);
          latencies.push(performance.now() - started);
          if (page.messages.length === 0 && !before) throw new Error('empty history');
        }
      }),
    );
    figures.push({ name: 'history_page_p50', value: round(percentile(latencies, 50), 1), unit: 'ms' });
    figures.push({ name: 'history_page_p99', value: round(percentile(latencies, 99), 1), unit: 'ms' });

    // --- ws_fanout: 500 subscribed sockets ---------------------------------------------------
    const sockets = options.fanoutSockets ?? 500;
    progress(`ws_fanout: ${sockets} subscribed sockets in a child process`);
    const listeners = members.slice(8, 18);
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        WS_CLIENTS,
        JSON.stringify({ url: base, tokens: listeners.map((m) => m.token), channel: chid, connections: sockets }),
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const lines: string[] = [];
    let waiting: ((line: string) => void) | null = null;
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        if (waiting) {
          waiting(line);
          waiting = null;
        } else lines.push(line);
      }
    });
    const nextLine = () =>
      lines.length ? Promise.resolve(lines.shift()!) : new Promise<string>((resolve) => (waiting = resolve));
    const ready = (JSON.parse(await nextLine()) as { ready: number }).ready;
    if (ready !== sockets) throw new Error(`only ${ready} of ${sockets} sockets subscribed`);
    let count = 0;
    const started = Date.now();
    const fanPosters: Operation[] = members.slice(0, 4).map((m) => async () => {
      await call('POST', `/api/channels/${chid}/messages`, m.token, { ciphertext });
      count += 1;
      return 1;
    });
    await throughput(fanPosters, { warmupMs: 0, measureMs: seconds * 1000 });
    child.stdin.write(JSON.stringify({ expect: count * sockets }) + '\n');
    const result = JSON.parse(await nextLine()) as { delivered: number; last: number };
    await new Promise((r) => child.once('exit', r));
    if (result.delivered < count * sockets)
      progress(`ws_fanout: ${result.delivered} of ${count * sockets} events arrived`);
    figures.push({
      name: 'ws_fanout_500sockets',
      value: round(result.delivered / ((result.last - started) / 1000)),
      unit: 'events/s',
    });
    figures.push({ name: 'ws_fanout_posts', value: round(count / seconds), unit: 'messages/s' });
  } finally {
    await chat!.close();
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}
