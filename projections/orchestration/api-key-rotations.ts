// Read model `api_key_rotations`: every rotation attempt with who, target, outcome, reason and
// time. Successful rotations come from UserApiKeyRotated, refusals from ApiKeyRotationRefused.

import type { Projection } from '../../infra/projections/engine.ts';

const ROUTE_OF_REASON: Record<string, string> = { self_service: 'self', admin: 'admin', recovery_cli: 'cli' };

export const apiKeyRotationsProjection: Projection = {
  name: 'api_key_rotations',
  handles: ['UserApiKeyRotated', 'ApiKeyRotationRefused'],
  tables: ['api_key_rotations'],
  async apply(event, tx) {
    const d = event.data as Record<string, string | null>;
    const actor = event.metadata.actor;
    const uuidOrNull = (v: string | null | undefined) => (v && /^[0-9a-f-]{36}$/i.test(v) ? v : null);
    if (event.type === 'UserApiKeyRotated') {
      await tx.query(
        `INSERT INTO api_key_rotations (event_id, actor_id, actor_kind, target_user_id, route, outcome, reason, at)
         VALUES ($1, $2, $3, $4, $5, 'rotated', $6, $7)`,
        [event.id, uuidOrNull(d.rotated_by), actor.kind, d.user_id, ROUTE_OF_REASON[d.reason ?? ''] ?? 'config', d.reason, d.at]);
    } else {
      await tx.query(
        `INSERT INTO api_key_rotations (event_id, actor_id, actor_kind, target_user_id, route, outcome, reason, at)
         VALUES ($1, $2, $3, $4, $5, 'refused', $6, $7)`,
        [event.id, uuidOrNull(d.actor_id), d.actor_kind, uuidOrNull(d.target_user_id), d.route, d.reason, d.at]);
    }
  },
};
