// Read model `security_audit`: security events (failed logins, refused rotations) for the audit log.

import type { Projection } from '../../infra/projections/engine.ts';

export const securityAuditProjection: Projection = {
  name: 'security_audit',
  handles: ['LoginFailed', 'ApiKeyRotationRefused'],
  tables: ['security_audit'],
  async apply(event, tx) {
    const d = event.data as Record<string, string | null>;
    const userId = event.type === 'LoginFailed' ? d.user_id : d.actor_id;
    await tx.query(
      'INSERT INTO security_audit (event_id, event_type, severity, user_id, details, at) VALUES ($1, $2, $3, $4, $5, $6)',
      [event.id, event.type === 'LoginFailed' ? 'login_failed' : 'api_key_rotation_refused', 'warning', userId ?? null, event.data, d.at]);
  },
};
