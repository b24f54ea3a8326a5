// The account behind an API-key hash or a session hash, looked up on every request. While this
// process runs the `users` and `sessions` projections, lookups are served from memory, so a
// keyed request costs no database round trip.
//
// Every change to those read models is committed here then, and the engine tells the cache
// (clearing it) before any `waitFor` on the change resolves: a rotated key or a deactivated
// account is refused on the very next request. A process that stands by for those projections
// reads the database every time. A generation counter keeps a lookup that raced with a change
// from storing what it read before the change.

import type { Clock } from '../../../infra/clock.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import type { ProjectionEngine } from '../../../infra/projections/engine.ts';
import { userByKeyHash, userBySession, type SessionUserRow, type UserRow } from '../../../projections/orchestration/users.ts';

export interface PrincipalLookup {
  byKeyHash(hash: string): Promise<UserRow | null>;
  bySessionHash(hash: string): Promise<SessionUserRow | null>;
}

const WATCHED = new Set(['users', 'sessions']);
const MAX_ENTRIES = 10_000;
/** Entries also age out, so time-based expiry (a session's end) is honoured within this bound. */
const MAX_AGE_MS = 30_000;

export class PrincipalCache implements PrincipalLookup {
  private readonly entries = new Map<string, { row: UserRow | null; until: number }>();
  private generation = 0;

  constructor(private readonly engine: Pick<ProjectionEngine, 'committed' | 'isActive'>, private readonly db: Pool, private readonly clock: Clock) {
    engine.committed.on('batch', ({ projection }) => {
      if (WATCHED.has(projection)) this.clear();
    });
    engine.committed.on('activity', (projection) => {
      if (WATCHED.has(projection)) this.clear();
    });
  }

  byKeyHash(hash: string): Promise<UserRow | null> {
    return this.get(`key:${hash}`, () => userByKeyHash(this.db, hash));
  }

  bySessionHash(hash: string): Promise<SessionUserRow | null> {
    return this.get(`session:${hash}`, () => userBySession(this.db, hash, this.clock.now()),
      (row) => row.session_expires_at.getTime()) as Promise<SessionUserRow | null>;
  }

  private get trusted(): boolean {
    return this.engine.isActive('users') && this.engine.isActive('sessions');
  }

  private clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /** The row for `key`, loading it with `load` on a miss; `expiresAt` bounds how long a loaded row may be served. */
  private async get<Row extends UserRow>(key: string, load: () => Promise<Row | null>, expiresAt?: (row: Row) => number): Promise<Row | null> {
    if (!this.trusted) return load();
    const now = this.clock.now().getTime();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.row as Row | null;
    const generation = this.generation;
    const row = await load();
    if (generation === this.generation && this.trusted) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { row, until: Math.min(now + MAX_AGE_MS, row && expiresAt ? expiresAt(row) : Infinity) });
    }
    return row;
  }
}
