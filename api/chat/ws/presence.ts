// Presence across instances: whether a user holds a socket on any chat instance (the push
// sender pushes only to users who hold none). Each instance's hub reports here when a user's
// first socket on it authenticates and when the last one closes; the tracker keeps one row per
// (instance, user) in `chat_presence`: written at once on connect, refreshed by a heartbeat
// every 10 s while the user stays, deleted on disconnect. A row counts for 30 s after its last
// heartbeat, so an instance killed without closing its sockets stops counting within that.
// The database's clock stamps and judges rows, so instances' clocks need not agree.
//
// Writes of one tracker run in order (a connect right after a disconnect is not undone by it).
// Presence is operational state, not an event: it would otherwise put a write per connection
// and per heartbeat on the log.

import { randomUUID } from 'node:crypto';
import type { Pool } from '../../../infra/db/pool.ts';
import type { Logger } from '../../../infra/logging.ts';
import { Ticker } from '../../../infra/ticker.ts';

export const PRESENCE = { heartbeatMs: 10_000, ttlSeconds: 30 };

export interface Presence {
  connected(userId: string): Promise<void>;
  disconnected(userId: string): void;
}

export class PresenceTracker implements Presence {
  /** This instance's rows (a process may hold several chat apps in tests: one tracker each). */
  readonly instanceId = randomUUID();
  /** The users here, each holding the heartbeat (infra/ticker.ts: it beats while anyone is here). */
  private readonly users = new Map<string, () => void>();
  private readonly heartbeats: Ticker;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Pool,
    private readonly log: Logger,
    heartbeatMs = PRESENCE.heartbeatMs,
  ) {
    this.heartbeats = new Ticker(heartbeatMs, () => void this.heartbeat());
  }

  /** A user's first socket here: counted online once this resolves. */
  connected(userId: string): Promise<void> {
    if (!this.users.has(userId)) this.users.set(userId, this.heartbeats.hold());
    return this.write('presence_connect_failed', (db) =>
      db.query(
        `INSERT INTO chat_presence (instance_id, user_id, seen_at) VALUES ($1, $2, now()) ON CONFLICT (instance_id, user_id) DO UPDATE SET seen_at = now()`,
        [this.instanceId, userId],
      ),
    );
  }

  /** A user's last socket here closed. */
  disconnected(userId: string): void {
    this.users.get(userId)?.();
    this.users.delete(userId);
    void this.write('presence_disconnect_failed', (db) =>
      db.query('DELETE FROM chat_presence WHERE instance_id = $1 AND user_id = $2', [this.instanceId, userId]),
    );
  }

  private heartbeat(): Promise<void> {
    const users = [...this.users.keys()];
    return this.write('presence_heartbeat_failed', async (db) => {
      if (users.length) {
        await db.query(
          `INSERT INTO chat_presence (instance_id, user_id, seen_at) SELECT $1, u, now() FROM unnest($2::uuid[]) AS u
           ON CONFLICT (instance_id, user_id) DO UPDATE SET seen_at = now()`,
          [this.instanceId, users],
        );
      }
      // Rows of instances that died without cleaning up: long past counting, swept by anyone.
      await db.query(`DELETE FROM chat_presence WHERE seen_at < now() - make_interval(secs => $1)`, [
        PRESENCE.ttlSeconds * 10,
      ]);
    });
  }

  private write(failure: string, op: (db: Pool) => Promise<unknown>): Promise<void> {
    const next = this.queue
      .then(() => op(this.db))
      .then(
        () => {},
        (error: Error) => this.log.warn(failure, { error: error.message }),
      );
    this.queue = next;
    return next;
  }
}

/** Those of `userIds` with a socket on some instance now (a row refreshed within the TTL). */
export async function usersWithSockets(db: Pool, userIds: string[]): Promise<Set<string>> {
  if (!userIds.length) return new Set();
  const { rows } = await db.query<{ user_id: string }>(
    `SELECT DISTINCT user_id FROM chat_presence WHERE user_id = ANY($1::uuid[]) AND seen_at > now() - make_interval(secs => $2)`,
    [userIds, PRESENCE.ttlSeconds],
  );
  return new Set(rows.map((r) => r.user_id));
}
