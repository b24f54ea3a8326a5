// Presence heartbeats on a real database: a row when a user's first socket on an instance joins,
// refreshed by the heartbeat while it stays, deleted when the last one leaves; a row whose
// heartbeat stopped (a killed instance) stops counting after the TTL and is swept later; two
// trackers (two instances) keep separate rows, and either counts.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { PresenceTracker, PRESENCE, usersWithSockets } from '../../../api/chat/ws/presence.ts';
import { createLogger } from '../../../infra/logging.ts';
import { freshDatabase, type TestDatabase } from '../../support/database.ts';
import { until } from '../../support/until.ts';

interface Ctx {
  db: TestDatabase;
}
const test = suite<Ctx>('chat presence heartbeats');
const log = createLogger({ level: 'error', sink: () => {} });

test.before(async (ctx) => {
  ctx.db = await freshDatabase('chat_presence');
});
test.after(async ({ db }) => db?.drop());

const seen = async (ctx: Ctx, instance: string, user: string) =>
  (
    await ctx.db.pool.query<{ seen_at: Date }>(
      'SELECT seen_at FROM chat_presence WHERE instance_id = $1 AND user_id = $2',
      [instance, user],
    )
  ).rows[0]?.seen_at ?? null;

test('connect writes a row at once; the heartbeat refreshes it; disconnect deletes it', async (ctx) => {
  const tracker = new PresenceTracker(ctx.db.pool, log, 200);
  const user = randomUUID();
  await tracker.connected(user);
  const first = await seen(ctx, tracker.instanceId, user);
  assert.ok(first);
  assert.equal([...(await usersWithSockets(ctx.db.pool, [user, randomUUID()]))], [user]);
  await until(
    'a heartbeat',
    async () => ((await seen(ctx, tracker.instanceId, user))?.getTime() ?? 0) > first!.getTime(),
    20_000,
    50,
  );
  tracker.disconnected(user);
  await until('the row to go', async () => (await seen(ctx, tracker.instanceId, user)) === null, 20_000, 50);
  assert.equal([...(await usersWithSockets(ctx.db.pool, [user]))], []);
});

test('two instances keep separate rows; a socket on either counts; a reconnect right after a disconnect stays', async (ctx) => {
  const a = new PresenceTracker(ctx.db.pool, log, 60_000);
  const b = new PresenceTracker(ctx.db.pool, log, 60_000);
  const user = randomUUID();
  await a.connected(user);
  await b.connected(user);
  a.disconnected(user);
  await until("instance a's row to go", async () => (await seen(ctx, a.instanceId, user)) === null, 20_000, 50);
  assert.equal([...(await usersWithSockets(ctx.db.pool, [user]))], [user], 'still on b');
  b.disconnected(user);
  await b.connected(user); // writes run in order: the delete does not undo the reconnect
  assert.ok(await seen(ctx, b.instanceId, user));
  b.disconnected(user);
});

test('a row whose heartbeat stopped counts for the TTL only, and is swept later by any heartbeat', async (ctx) => {
  const dead = randomUUID();
  const stale = randomUUID();
  await ctx.db.pool.query(
    `INSERT INTO chat_presence (instance_id, user_id, seen_at) VALUES ('killed', $1, now() - make_interval(secs => $2)), ('killed', $3, now() - make_interval(secs => $4))`,
    [stale, PRESENCE.ttlSeconds + 5, dead, PRESENCE.ttlSeconds * 10 + 5],
  );
  assert.equal([...(await usersWithSockets(ctx.db.pool, [stale, dead]))], []);
  const tracker = new PresenceTracker(ctx.db.pool, log, 100);
  const someone = randomUUID();
  await tracker.connected(someone);
  await until('the sweep', async () => (await seen(ctx, 'killed', dead)) === null, 20_000, 50);
  assert.ok(await seen(ctx, 'killed', stale), 'younger stale rows wait for the sweep age');
  tracker.disconnected(someone);
});

test.run();
