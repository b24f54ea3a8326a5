// The chat scheduler's figure: two `serve chat` processes on one database, `jobs` scheduled
// messages (default 10,000) all due at the same instant; from that instant until every one is
// posted (its `MessagePosted` appended by the poster), jobs/s, and the duplicates found in the
// log (MessagePosted or ScheduledMessageDelivered events beyond one per message). The baseline
// is the rate at which the same messages were scheduled (one decided append each, 16 writers),
// measured in the same run: firing costs a read, a decision and an append, plus the poster's
// append, so a ratio near 0.5 means the scheduler adds little beyond the log's own cost.

import { bearer, registerChat, uniqueName } from '../tests/support/chat.ts';
import { startChatProcess } from '../tests/support/chat-process.ts';
import { http } from '../tests/support/services.ts';
import { postedCount, seedScheduled, seedingPlatform } from '../tests/support/schedule.ts';
import type { Figure } from './figure.ts';
import { BENCH_POOL_ENV } from './pools.ts';

export interface ScheduleBenchOptions {
  jobs?: number;
  progress?: (message: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function scheduleFigures(databaseUrl: string, options: ScheduleBenchOptions = {}): Promise<Figure[]> {
  const jobs = options.jobs ?? 10_000;
  const progress = options.progress ?? (() => {});
  const env = { ...BENCH_POOL_ENV, CHATSVC_AUTH_RATE_PER_MIN: '100000', CHATSVC_API_RATE_PER_SEC: '100000' };
  progress('starting two chat processes');
  // Both start at once on a fresh database (each migrates it, or waits for the other to): on a
  // loaded 2-core machine that has taken over two minutes.
  // When one does not start, the other is stopped: the run goes on with other areas, and a
  // process left behind would hold its connections until the end.
  const started = await Promise.allSettled([
    startChatProcess(databaseUrl, env, 300_000),
    startChatProcess(databaseUrl, env, 300_000),
  ]);
  const instances = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const refused = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (refused) {
    await Promise.all(instances.map((i) => i.stop()));
    throw refused.reason;
  }
  const seed = await seedingPlatform(databaseUrl, BENCH_POOL_ENV).catch(async (error) => {
    await Promise.all(instances.map((i) => i.stop()));
    throw error;
  });
  try {
    const [a] = instances;
    const owner = await registerChat(a!.url, uniqueName('bench'));
    const call = async (method: string, path: string, json: unknown) =>
      (await http(`${a!.url}${path}`, { method, headers: bearer(owner), json })).body;
    const cid = (await call('POST', '/api/communities', { name: 'Bench' })).id;
    const gid = (await call('POST', '/api/groups', { community_id: cid, name: 'G', visibility: 'public' })).id;
    const chid = (await call('POST', `/api/groups/${gid}/channels`, { name: 'sched' })).id;

    // All due at one instant, far enough ahead for the seeding and the jobs projection to finish.
    const due = Date.now() + 10_000 + jobs * 4;
    progress(`scheduling ${jobs} messages due at ${new Date(due).toISOString()}`);
    const seedStart = performance.now();
    const ids = await seedScheduled(seed, chid, owner.id, jobs, () => new Date(due));
    const seedRate = jobs / ((performance.now() - seedStart) / 1000);
    const { rows } = await seed.pool.query<{ n: string }>(
      `SELECT count(*) AS n FROM scheduled_jobs WHERE kind = 'message'`,
    );
    progress(
      `scheduled at ${seedRate.toFixed(0)}/s; ${rows[0]!.n} jobs projected; ${((due - Date.now()) / 1000).toFixed(1)} s to go`,
    );
    if (Date.now() > due)
      progress('warning: seeding overran the due time; the figure includes the projection catching up');
    await sleep(Math.max(0, due - Date.now()));
    const start = performance.now();
    for (;;) {
      const c = await seed.pool.query<{ n: string }>(`SELECT count(*) AS n FROM events WHERE type = 'MessagePosted'`);
      if (Number(c.rows[0]!.n) >= jobs) break;
      if (performance.now() - start > 600_000)
        throw new Error('scheduler bench: not every message was posted within 10 minutes');
      await sleep(100);
    }
    const seconds = (performance.now() - start) / 1000;
    progress(`every message posted ${seconds.toFixed(1)} s after the due instant`);
    await sleep(2000);
    const counts = await postedCount(seed, ids);
    const duplicates = counts.events - counts.streams + Math.max(0, counts.delivered - jobs);
    const rate = jobs / seconds;
    return [
      {
        name: 'scheduler_fire',
        value: Math.round(rate),
        unit: 'jobs/s',
        baseline: 'scheduled_seed_appends',
        ratio: Number((rate / seedRate).toFixed(2)),
      },
      { name: 'scheduled_seed_appends', value: Math.round(seedRate), unit: 'appends/s' },
      { name: 'scheduler_fire_duplicates', value: duplicates, unit: 'duplicates' },
    ];
  } finally {
    await seed.close();
    await Promise.all(instances.map((i) => i.stop()));
  }
}
