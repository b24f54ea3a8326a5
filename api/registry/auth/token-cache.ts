// Machine tokens by hash, looked up on every token request: from memory while this process runs
// the `registry_tokens` projection (see ReadModelCache), so a revoked token is refused on the
// very next request. Expiry is checked by the caller against the clock, never cached.

import type { Pool } from '../../../infra/db/pool.ts';
import type { ProcessorEngine } from '../../../infra/processors/engine.ts';
import { ReadModelCache } from '../../../infra/processors/read-model-cache.ts';
import { tokenByHash, type TokenRow } from '../../../projections/registry/tokens.ts';

export interface TokenLookup {
  byHash(hash: string): Promise<TokenRow | null>;
}

export class TokenCache implements TokenLookup {
  private readonly cache: ReadModelCache<TokenRow>;

  constructor(
    engine: Pick<ProcessorEngine, 'committed' | 'isActive'>,
    private readonly db: Pool,
  ) {
    this.cache = new ReadModelCache(engine, ['registry_tokens']);
  }

  byHash(hash: string): Promise<TokenRow | null> {
    return this.cache.get(hash, () => tokenByHash(this.db, hash));
  }
}
