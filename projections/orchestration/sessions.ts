// Read model `sessions`: looked up by the hash of the `orch_sess` cookie on every session request.

import type { Projection } from '../../infra/projections/engine.ts';

export const sessionsProjection: Projection = {
  name: 'sessions',
  handles: ['SessionStarted', 'SessionEnded'],
  tables: ['sessions'],
  async apply(event, tx) {
    const d = event.data as Record<string, string>;
    if (event.type === 'SessionStarted') {
      await tx.query('INSERT INTO sessions (session_hash, user_id, via, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
        [d.session_hash, d.user_id, d.via, d.at, d.expires_at]);
    } else {
      await tx.query('UPDATE sessions SET ended_at = $2 WHERE session_hash = $1', [d.session_hash, d.at]);
    }
  },
};
