// An in-process cache of the account behind an API-key hash or a session hash, so a keyed
// request does not cost a database round trip.
//
// It is only trusted while this process itself runs the `users` and `sessions` projections: then
// every change to those read models is committed here, and the engine tells the cache (clearing
// it) before any `waitFor` on the change resolves. So a rotated key or a deactivated account is
// refused on the very next request. A process that stands by for those projections reads the
// database every time. A generation counter keeps a lookup that raced with a change from storing
// what it read before the change.

import type { ProjectionEngine } from '../../infra/projections/engine.ts';
import type { UserRow } from './accounts/queries.ts';

const WATCHED = new Set(['users', 'sessions']);
const MAX_ENTRIES = 10_000;
/** Entries also age out, so time-based expiry (a session's end) is honoured within this bound. */
const MAX_AGE_MS = 30_000;

export class PrincipalCache {
  private readonly entries = new Map<string, { row: UserRow | null; until: number }>();
  private generation = 0;

  constructor(private readonly engine: ProjectionEngine) {
    engine.committed.on('batch', ({ projection }) => {
      if (WATCHED.has(projection)) this.clear();
    });
    engine.committed.on('activity', (projection) => {
      if (WATCHED.has(projection)) this.clear();
    });
  }

  private get trusted(): boolean {
    return this.engine.isActive('users') && this.engine.isActive('sessions');
  }

  private clear(): void {
    this.generation += 1;
    this.entries.clear();
  }

  /**
   * The row for `key` (`key:<hash>` or `session:<hash>`), loading it with `load` on a miss.
   * `expiresAt` bounds how long a loaded row may be served (a session's end).
   */
  async get(key: string, load: () => Promise<UserRow | null>, expiresAt?: (row: UserRow) => number): Promise<UserRow | null> {
    if (!this.trusted) return load();
    const now = Date.now();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.row;
    const generation = this.generation;
    const row = await load();
    if (generation === this.generation && this.trusted) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { row, until: Math.min(now + MAX_AGE_MS, row && expiresAt ? expiresAt(row) : Infinity) });
    }
    return row;
  }
}
