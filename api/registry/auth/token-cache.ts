// Machine tokens by hash, looked up on every token request. While this process runs the
// `registry_tokens` projection, lookups are served from memory and the cache is cleared around
// every commit of that projection (the engine tells it before any read-your-writes wait
// resolves), so a revoked token is refused on the very next request. A process standing by for
// the projection reads the database every time. Expiry is checked by the caller against the
// clock, never cached.

import type { Pool } from '../../../infra/db/pool.ts';
import type { ProjectionEngine } from '../../../infra/projections/engine.ts';
import { tokenByHash, type TokenRow } from '../../../projections/registry/tokens.ts';

export interface TokenLookup {
  byHash(hash: string): Promise<TokenRow | null>;
}

const PROJECTION = 'registry_tokens';
const MAX_ENTRIES = 10_000;

export class TokenCache implements TokenLookup {
  private readonly entries = new Map<string, TokenRow | null>();
  private generation = 0;

  constructor(private readonly engine: Pick<ProjectionEngine, 'committed' | 'isActive'>, private readonly db: Pool) {
    const clear = (projection: string) => {
      if (projection === PROJECTION) {
        this.generation += 1;
        this.entries.clear();
      }
    };
    engine.committed.on('batch', ({ projection }) => clear(projection));
    engine.committed.on('activity', clear);
  }

  async byHash(hash: string): Promise<TokenRow | null> {
    if (!this.engine.isActive(PROJECTION)) return tokenByHash(this.db, hash);
    if (this.entries.has(hash)) return this.entries.get(hash)!;
    const generation = this.generation;
    const row = await tokenByHash(this.db, hash);
    if (generation === this.generation && this.engine.isActive(PROJECTION)) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(hash, row);
    }
    return row;
  }
}
