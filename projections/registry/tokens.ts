// The machine-token read model (`registry_tokens`), looked up by the token's SHA-256 on every
// token request. `last_used_at` moves forward only (uses are recorded coalesced, and may land
// out of order).

import type { Scope } from '../../domain/registry/catalog.ts';
import type { TokenEvent } from '../../domain/registry/tokens/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import { paged, ts, where, type Rows } from './columns.ts';

export const tokensProjection = defineProjection<TokenEvent>({
  name: 'registry_tokens',
  handles: ['RegistryTokenCreated', 'RegistryTokenRevoked', 'RegistryTokenUsed'],
  tables: ['registry_tokens'],
  async apply(event, tx) {
    switch (event.type) {
      case 'RegistryTokenCreated': {
        const d = event.data;
        await tx.query(
          `INSERT INTO registry_tokens (id, name, token_hash, token_prefix, scopes, created_by, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
          [d.token_id, d.name, d.token_hash, d.token_prefix, d.scopes, d.created_by, d.at, d.expires_at],
        );
        return;
      }
      case 'RegistryTokenRevoked':
        await tx.query('UPDATE registry_tokens SET revoked_at = $2 WHERE id = $1', [
          event.data.token_id,
          event.data.at,
        ]);
        return;
      case 'RegistryTokenUsed':
        await tx.query(
          'UPDATE registry_tokens SET last_used_at = greatest(coalesce(last_used_at, $2), $2) WHERE id = $1',
          [event.data.token_id, event.data.at],
        );
        return;
    }
  },
});

export interface TokenRow {
  id: string;
  name: string;
  token_prefix: string;
  scopes: Scope[];
  created_by: string | null;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

const TOKEN = `id, name, token_prefix, scopes, created_by, ${ts('created_at')}, ${ts('expires_at')}, ${ts('revoked_at')}, ${ts('last_used_at')}`;

export async function tokenByHash(pool: Pool, hash: string): Promise<TokenRow | null> {
  const { rows } = await pool.query<TokenRow>(`SELECT ${TOKEN} FROM registry_tokens WHERE token_hash = $1`, [hash]);
  return rows[0] ?? null;
}

export async function tokenById(pool: Pool, id: string): Promise<TokenRow | null> {
  const { rows } = await pool.query<TokenRow>(`SELECT ${TOKEN} FROM registry_tokens WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function listTokens(pool: Pool, page: { limit: number; offset: number }): Promise<Rows<TokenRow>> {
  return paged<TokenRow>(pool, TOKEN, 'FROM registry_tokens', where([]), 'created_at DESC, id', page);
}
