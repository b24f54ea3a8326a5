// The live session behind an access token, looked up on every authenticated chat request:
// from memory while this process runs the `chat_sessions` and `chat_users` projections (see
// ReadModelCache), so a revoked session or a deleted account is refused on the very next request.

import type { Pool } from '../../infra/db/pool.ts';
import type { ProcessorEngine } from '../../infra/processors/engine.ts';
import { ReadModelCache } from '../../infra/processors/read-model-cache.ts';
import { sessionPrincipal, type SessionPrincipalRow } from '../../projections/chat/sessions.ts';

export interface SessionLookup {
  principal(sessionId: string, userId: string): Promise<SessionPrincipalRow | null>;
}

export class ChatSessionCache implements SessionLookup {
  private readonly cache: ReadModelCache<SessionPrincipalRow>;

  constructor(
    engine: Pick<ProcessorEngine, 'committed' | 'isActive'>,
    private readonly db: Pool,
  ) {
    this.cache = new ReadModelCache(engine, ['chat_sessions', 'chat_users']);
  }

  principal(sessionId: string, userId: string): Promise<SessionPrincipalRow | null> {
    return this.cache.get(`${sessionId}:${userId}`, () => sessionPrincipal(this.db, sessionId, userId));
  }
}
