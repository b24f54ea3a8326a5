// The live session behind an access token, looked up on every authenticated chat request.
// While this process runs the `chat_sessions` and `chat_users` projections, lookups are served
// from memory: every change to those read models is committed here, and the engine tells the
// cache (clearing it) before any wait on the change resolves, so a revoked session or a deleted
// account is refused on the very next request. A process standing by for those projections reads
// the database every time. (The same scheme as the orchestration principal cache.)

import type { Pool } from '../../infra/db/pool.ts';
import type { ProjectionEngine } from '../../infra/projections/engine.ts';
import { sessionPrincipal, type SessionPrincipalRow } from '../../projections/chat/sessions.ts';

export interface SessionLookup {
  principal(sessionId: string, userId: string): Promise<SessionPrincipalRow | null>;
}

const WATCHED = new Set(['chat_sessions', 'chat_users']);
const MAX_ENTRIES = 10_000;

export class ChatSessionCache implements SessionLookup {
  private readonly entries = new Map<string, SessionPrincipalRow | null>();
  private generation = 0;

  constructor(private readonly engine: Pick<ProjectionEngine, 'committed' | 'isActive'>, private readonly db: Pool) {
    const clear = (projection: string) => {
      if (WATCHED.has(projection)) {
        this.generation += 1;
        this.entries.clear();
      }
    };
    engine.committed.on('batch', ({ projection }) => clear(projection));
    engine.committed.on('activity', clear);
  }

  async principal(sessionId: string, userId: string): Promise<SessionPrincipalRow | null> {
    const trusted = () => this.engine.isActive('chat_sessions') && this.engine.isActive('chat_users');
    if (!trusted()) return sessionPrincipal(this.db, sessionId, userId);
    const key = `${sessionId}:${userId}`;
    if (this.entries.has(key)) return this.entries.get(key)!;
    const generation = this.generation;
    const row = await sessionPrincipal(this.db, sessionId, userId);
    if (generation === this.generation && trusted()) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, row);
    }
    return row;
  }
}
