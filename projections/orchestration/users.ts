// Read model `users`: one row per account, looked up by API-key hash on every keyed request.

import type { Projection } from '../../infra/projections/engine.ts';

export const usersProjection: Projection = {
  name: 'users',
  handles: ['UserCreated', 'UserApiKeyRotated', 'UserRoleChanged', 'UserDeactivated', 'UserReactivated'],
  tables: ['users'],
  async apply(event, tx) {
    const d = event.data as Record<string, string>;
    switch (event.type) {
      case 'UserCreated':
        await tx.query(
          `INSERT INTO users (id, username, email, role, auth_source, principal_type, is_active, api_key_hash, api_key_sealed, password_hash, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, true, $7, $8, $9, $10, $10)`,
          [d.user_id, d.username, d.email, d.role, d.auth_source, d.principal_type ?? 'account', d.api_key_hash, d.api_key_sealed, d.password_hash ?? null, d.at]);
        return;
      case 'UserApiKeyRotated':
        await tx.query('UPDATE users SET api_key_hash = $2, api_key_sealed = $3, updated_at = $4 WHERE id = $1',
          [d.user_id, d.api_key_hash, d.api_key_sealed, d.at]);
        return;
      case 'UserRoleChanged':
        await tx.query('UPDATE users SET role = $2, updated_at = $3 WHERE id = $1', [d.user_id, d.role, d.at]);
        return;
      case 'UserDeactivated':
      case 'UserReactivated':
        await tx.query('UPDATE users SET is_active = $2, updated_at = $3 WHERE id = $1',
          [d.user_id, event.type === 'UserReactivated', d.at]);
        return;
    }
  },
};
