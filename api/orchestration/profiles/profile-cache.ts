// A profile by slug, looked up on every chat turn: from memory while this process runs the
// `profiles` projection (see ReadModelCache), so a disabled, re-tiered or edited profile takes
// effect on the very next turn; a process standing by for that projection reads the database.

import type { Pool } from '../../../infra/db/pool.ts';
import type { ProcessorEngine } from '../../../infra/processors/engine.ts';
import { ReadModelCache } from '../../../infra/processors/read-model-cache.ts';
import { profileBySlug, type ProfileRow } from '../../../projections/orchestration/profiles.ts';

export interface ProfileLookup {
  /** The profile row (shared: callers must not change it), or null. */
  bySlug(slug: string): Promise<ProfileRow | null>;
}

export class ProfileCache implements ProfileLookup {
  private readonly cache: ReadModelCache<ProfileRow>;

  constructor(
    engine: Pick<ProcessorEngine, 'committed' | 'isActive'>,
    private readonly db: Pool,
  ) {
    this.cache = new ReadModelCache(engine, ['profiles']);
  }

  bySlug(slug: string): Promise<ProfileRow | null> {
    return this.cache.get(slug, () => profileBySlug(this.db, slug));
  }
}
