// The bot token behind an `X-Bot-Token`, looked up on every bot request: from memory while this
// process runs the `chat_bot_tokens` and `chat_users` projections (see ReadModelCache), so a
// revoked token, a deleted or suspended bot is refused on the very next request. Expiry is
// checked by the caller against the clock on every request.
//
// Also where use is coalesced: `shouldRecordUse` says yes at most once a minute per token in this
// process, so `last_used_at` costs one event per token per minute, not one per request.

import type { Pool } from '../../infra/db/pool.ts';
import type { ProcessorEngine } from '../../infra/processors/engine.ts';
import { ReadModelCache } from '../../infra/processors/read-model-cache.ts';
import { botTokenByHash, type BotTokenAuthRow } from '../../projections/chat/bots.ts';

/** How often a token's use is recorded at most (per process). */
export const USE_RECORD_INTERVAL_MS = 60_000;
const MAX_TRACKED = 10_000;

export interface BotTokenLookup {
  byHash(tokenHash: string): Promise<BotTokenAuthRow | null>;
  /** True when this use should be recorded (the first in this process, or a minute after the last recorded one). */
  shouldRecordUse(tokenId: string, nowMs: number): boolean;
}

export class BotTokenCache implements BotTokenLookup {
  private readonly cache: ReadModelCache<BotTokenAuthRow>;
  private readonly recorded = new Map<string, number>();

  constructor(
    engine: Pick<ProcessorEngine, 'committed' | 'isActive'>,
    private readonly db: Pool,
  ) {
    this.cache = new ReadModelCache(engine, ['chat_bot_tokens', 'chat_users']);
  }

  byHash(tokenHash: string): Promise<BotTokenAuthRow | null> {
    return this.cache.get(tokenHash, () => botTokenByHash(this.db, tokenHash));
  }

  shouldRecordUse(tokenId: string, nowMs: number): boolean {
    const last = this.recorded.get(tokenId);
    if (last !== undefined && nowMs - last < USE_RECORD_INTERVAL_MS && nowMs >= last) return false;
    if (this.recorded.size >= MAX_TRACKED) this.recorded.clear();
    this.recorded.set(tokenId, nowMs);
    return true;
  }
}
