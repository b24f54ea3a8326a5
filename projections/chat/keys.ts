// Public keys of chat accounts: identity and signed prekeys (`chat_identity_keys`, with the
// previous signed prekey during its grace period) and one-time prekeys
// (`chat_one_time_prekeys`, marked when handed out). A bundle fetch reads its keys and the
// next unconsumed one-time prekeys here, then claims one (domain/chat/keys/claim.ts).

import type { PrekeyClaimEvent, KeysEvent } from '../../domain/chat/keys/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { PoolClient } from '../../infra/db/pool.ts';
import { defineProjection, type Recorded } from '../../infra/processors/projection.ts';

async function applyOne(event: Recorded<KeysEvent | PrekeyClaimEvent>, tx: PoolClient): Promise<void> {
  switch (event.type) {
    case 'IdentityKeyRegistered':
      // The signed prekey arrives in the same append; the row starts with placeholders it fills.
      await tx.query(
        `INSERT INTO chat_identity_keys (user_id, identity_key, signed_key_id, signed_public_key, signed_signature, updated_at)
         VALUES ($1, $2, -1, '', '', $3)`,
        [event.data.user_id, event.data.identity_key, event.data.at],
      );
      return;
    case 'SignedPrekeyUploaded': {
      const d = event.data;
      await tx.query(
        `UPDATE chat_identity_keys SET
           previous_key_id = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE signed_key_id END,
           previous_public_key = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE signed_public_key END,
           previous_signature = CASE WHEN $5::timestamptz IS NULL THEN NULL ELSE signed_signature END,
           previous_valid_until = $5,
           signed_key_id = $2, signed_public_key = $3, signed_signature = $4, updated_at = $6
         WHERE user_id = $1`,
        [d.user_id, d.key_id, d.public_key, d.signature, d.previous_valid_until, d.at],
      );
      return;
    }
    case 'PrekeysUploaded': {
      const d = event.data;
      await tx.query(
        `INSERT INTO chat_one_time_prekeys (user_id, key_id, public_key, uploaded_at)
         SELECT $1, k.key_id, k.public_key, $4 FROM unnest($2::bigint[], $3::text[]) AS k(key_id, public_key)`,
        [d.user_id, d.prekeys.map((p) => p.key_id), d.prekeys.map((p) => p.public_key), d.at],
      );
      return;
    }
    case 'PrekeyConsumed':
      await tx.query('UPDATE chat_one_time_prekeys SET consumed_at = $3 WHERE user_id = $1 AND key_id = $2', [
        event.data.user_id,
        event.data.key_id,
        event.data.at,
      ]);
      return;
    case 'KeysRemoved':
      await tx.query('DELETE FROM chat_identity_keys WHERE user_id = $1', [event.data.user_id]);
      await tx.query('DELETE FROM chat_one_time_prekeys WHERE user_id = $1', [event.data.user_id]);
      return;
  }
}

export const chatKeysProjection = defineProjection<KeysEvent | PrekeyClaimEvent>({
  name: 'chat_keys',
  handles: ['IdentityKeyRegistered', 'SignedPrekeyUploaded', 'PrekeysUploaded', 'PrekeyConsumed', 'KeysRemoved'],
  tables: ['chat_identity_keys', 'chat_one_time_prekeys'],
  apply: applyOne,
  async applyBatch(events, tx) {
    // Consumptions dominate (one per bundle fetch): one statement for a run of them.
    const consumed = events.filter((e) => e.type === 'PrekeyConsumed');
    if (consumed.length === events.length) {
      await tx.query(
        `UPDATE chat_one_time_prekeys p SET consumed_at = c.at FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[]) AS c(user_id, key_id, at)
         WHERE p.user_id = c.user_id AND p.key_id = c.key_id`,
        [
          consumed.map((e) => e.data.user_id),
          consumed.map((e) => (e.data as { key_id: number }).key_id),
          consumed.map((e) => e.data.at),
        ],
      );
      return;
    }
    for (const event of events) await applyOne(event, tx);
  },
});

export async function unconsumedPrekeyCount(db: Pool, userId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM chat_one_time_prekeys WHERE user_id = $1 AND consumed_at IS NULL',
    [userId],
  );
  return rows[0]!.n;
}

export interface BundleSource {
  identity_key: string;
  signed_key_id: string;
  signed_public_key: string;
  signed_signature: string;
  /** Unconsumed one-time prekeys, lowest id first (at most `limit`). */
  candidates: { key_id: number; public_key: string }[];
  unconsumed: number;
}

/** What a bundle fetch needs in one query; null for an account without keys (unknown or deleted). */
export async function bundleSource(db: Pool, userId: string, limit: number): Promise<BundleSource | null> {
  const { rows } = await db.query<
    Omit<BundleSource, 'candidates'> & { candidates: { key_id: string | number; public_key: string }[] | null }
  >(
    `SELECT k.identity_key, k.signed_key_id::text, k.signed_public_key, k.signed_signature,
       (SELECT count(*)::int FROM chat_one_time_prekeys p WHERE p.user_id = k.user_id AND p.consumed_at IS NULL) AS unconsumed,
       (SELECT json_agg(json_build_object('key_id', c.key_id, 'public_key', c.public_key) ORDER BY c.key_id)
          FROM (SELECT key_id, public_key FROM chat_one_time_prekeys p WHERE p.user_id = k.user_id AND p.consumed_at IS NULL ORDER BY key_id LIMIT $2) c) AS candidates
     FROM chat_identity_keys k WHERE k.user_id = $1`,
    [userId, limit],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    ...row,
    candidates: (row.candidates ?? []).map((c) => ({ key_id: Number(c.key_id), public_key: c.public_key })),
  };
}

export interface SignedPrekeyRow {
  signed_key_id: string;
  previous_key_id: string | null;
  previous_valid_until: Date | null;
}

export async function signedPrekeyOf(db: Pool, userId: string): Promise<SignedPrekeyRow | null> {
  const { rows } = await db.query<SignedPrekeyRow>(
    'SELECT signed_key_id, previous_key_id, previous_valid_until FROM chat_identity_keys WHERE user_id = $1',
    [userId],
  );
  return rows[0] ?? null;
}

export async function identityKeyOf(db: Pool, userId: string): Promise<string | null> {
  const { rows } = await db.query<{ identity_key: string }>(
    'SELECT identity_key FROM chat_identity_keys WHERE user_id = $1',
    [userId],
  );
  return rows[0]?.identity_key ?? null;
}
