// The account behind an API-key hash or a session hash, looked up on every request: from memory
// while this process runs the `users` and `sessions` projections (see ReadModelCache), so a
// rotated key or a deactivated account is refused on the very next request. Entries also age
// out after 30 s, and a session's row at its end, so time-based expiry is honoured.

import type { Clock } from '../../../infra/clock.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import type { ProcessorEngine } from '../../../infra/processors/engine.ts';
import { ReadModelCache } from '../../../infra/processors/read-model-cache.ts';
import {
  userByKeyHash,
  userBySession,
  type SessionUserRow,
  type UserRow,
} from '../../../projections/orchestration/users.ts';

export interface PrincipalLookup {
  byKeyHash(hash: string): Promise<UserRow | null>;
  bySessionHash(hash: string): Promise<SessionUserRow | null>;
}

const MAX_AGE_MS = 30_000;

export class PrincipalCache implements PrincipalLookup {
  private readonly cache: ReadModelCache<UserRow>;

  constructor(
    engine: Pick<ProcessorEngine, 'committed' | 'isActive'>,
    private readonly db: Pool,
    private readonly clock: Clock,
  ) {
    this.cache = new ReadModelCache(engine, ['users', 'sessions'], { clock, maxAgeMs: MAX_AGE_MS });
  }

  byKeyHash(hash: string): Promise<UserRow | null> {
    return this.cache.get(`key:${hash}`, () => userByKeyHash(this.db, hash));
  }

  bySessionHash(hash: string): Promise<SessionUserRow | null> {
    return this.cache.get(
      `session:${hash}`,
      () => userBySession(this.db, hash, this.clock.now()),
      (row) => (row as SessionUserRow).session_expires_at.getTime(),
    ) as Promise<SessionUserRow | null>;
  }
}
