// The bot's device state (migration 018): identity, prekeys, ratchet sessions, sender-key
// states, cursors, handled message ids, held messages, webhook tokens and conversation ids.
// Never in the log. Every secret column is sealed under ORCH_INTEGRATION_ENCRYPTION_KEY with a
// context naming its row, so a value copied to another row does not open.
//
// `commitDecrypt` is the one write of a decrypted inbound message: the message id is marked
// handled and the changed state (session, receiver, used prekey) stored in one transaction,
// before any reply goes out. A redelivered id finds its mark and is skipped; a crash after the
// commit loses at most that reply, never a ratchet step.

import { openSecret, sealSecret } from '../../crypto/seal.ts';
import {
  deserializeSenderKey,
  deserializeSenderKeyReceiver,
  deserializeSession,
  serializeSenderKey,
  serializeSenderKeyReceiver,
  serializeSession,
  type IdentityKeyPair,
  type OneTimePrekey,
  type SenderKeyReceiver,
  type SenderKeyState,
  type Session,
  type SignedPrekey,
} from '../../crypto/e2ee/index.ts';
import { inTransaction, type Pool, type PoolClient } from '../db/pool.ts';

export interface StoredSignedPrekey extends SignedPrekey {
  created_at: string;
  /** Set once replaced: kept until then + 30 days for first messages still in flight. */
  retired_at: string | null;
}

export interface DeviceKeys {
  bot_user_id: string;
  identity: IdentityKeyPair;
  /** Current first. */
  signed: StoredSignedPrekey[];
  next_prekey_id: number;
  next_signed_id: number;
}

const b = (bytes: Uint8Array) => Array.from(bytes);
const u = (list: number[]) => Uint8Array.from(list);

function keysToJson(keys: DeviceKeys): string {
  return JSON.stringify({
    bot_user_id: keys.bot_user_id,
    identity: { publicKey: b(keys.identity.publicKey), secretKey: b(keys.identity.secretKey) },
    signed: keys.signed.map((s) => ({
      keyId: s.keyId,
      publicKey: b(s.publicKey),
      secretKey: b(s.secretKey),
      signature: b(s.signature),
      created_at: s.created_at,
      retired_at: s.retired_at,
    })),
    next_prekey_id: keys.next_prekey_id,
    next_signed_id: keys.next_signed_id,
  });
}

function keysFromJson(json: string): DeviceKeys {
  const r = JSON.parse(json);
  return {
    bot_user_id: r.bot_user_id,
    identity: { publicKey: u(r.identity.publicKey), secretKey: u(r.identity.secretKey) },
    signed: r.signed.map((s: any) => ({
      keyId: s.keyId,
      publicKey: u(s.publicKey),
      secretKey: u(s.secretKey),
      signature: u(s.signature),
      created_at: s.created_at,
      retired_at: s.retired_at,
    })),
    next_prekey_id: r.next_prekey_id,
    next_signed_id: r.next_signed_id,
  };
}

export interface HeldMessage {
  message_id: string;
  channel_id: string;
  message: Record<string, any>;
  held_at: Date;
}

/** What one decrypt changed, stored together with the handled mark. */
export interface DecryptCommit {
  message_id: string;
  session?: { peer_user_id: string; peer_fingerprint: string; session: Session };
  receiver?: { channel_id: string; sender_id: string; receiver: SenderKeyReceiver };
  used_prekey_id?: number | null;
  cursor?: { channel_id: string; message_id: string; at: string };
}

export class DeviceStore {
  constructor(
    private readonly pool: Pool,
    private readonly key: Uint8Array,
  ) {}

  private seal(text: string, context: string) {
    return sealSecret(this.key, text, `chatsvc:${context}`);
  }

  private open(sealed: string, context: string) {
    return openSecret(this.key, sealed, `chatsvc:${context}`);
  }

  private tx<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }

  // --- keys ------------------------------------------------------------------------------------

  async create(
    integrationId: string,
    profileId: string,
    keys: DeviceKeys,
    prekeys: OneTimePrekey[],
    at: Date,
  ): Promise<void> {
    await this.tx(async (client) => {
      await client.query(
        'INSERT INTO chatsvc_devices (integration_id, profile_id, state_sealed, updated_at) VALUES ($1, $2, $3, $4)',
        [integrationId, profileId, this.seal(keysToJson(keys), `${integrationId}:device`), at],
      );
      await this.insertPrekeys(client, integrationId, prekeys);
    });
  }

  private async insertPrekeys(
    client: PoolClient | Pool,
    integrationId: string,
    prekeys: OneTimePrekey[],
  ): Promise<void> {
    if (!prekeys.length) return;
    const values: unknown[] = [];
    const rows = prekeys.map((p, i) => {
      values.push(
        integrationId,
        p.keyId,
        this.seal(
          JSON.stringify({ publicKey: b(p.publicKey), secretKey: b(p.secretKey) }),
          `${integrationId}:prekey:${p.keyId}`,
        ),
      );
      return `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3})`;
    });
    await client.query(
      `INSERT INTO chatsvc_prekeys (integration_id, key_id, secret_sealed) VALUES ${rows.join(', ')}`,
      values,
    );
  }

  async keys(integrationId: string): Promise<DeviceKeys | null> {
    const row = (
      await this.pool.query<{ state_sealed: string }>(
        'SELECT state_sealed FROM chatsvc_devices WHERE integration_id = $1',
        [integrationId],
      )
    ).rows[0];
    return row ? keysFromJson(this.open(row.state_sealed, `${integrationId}:device`)) : null;
  }

  async saveKeys(integrationId: string, keys: DeviceKeys, at: Date): Promise<void> {
    await this.pool.query('UPDATE chatsvc_devices SET state_sealed = $2, updated_at = $3 WHERE integration_id = $1', [
      integrationId,
      this.seal(keysToJson(keys), `${integrationId}:device`),
      at,
    ]);
  }

  async addPrekeys(integrationId: string, prekeys: OneTimePrekey[]): Promise<void> {
    await this.insertPrekeys(this.pool, integrationId, prekeys);
  }

  async prekey(integrationId: string, keyId: number): Promise<OneTimePrekey | null> {
    const row = (
      await this.pool.query<{ secret_sealed: string }>(
        'SELECT secret_sealed FROM chatsvc_prekeys WHERE integration_id = $1 AND key_id = $2',
        [integrationId, keyId],
      )
    ).rows[0];
    if (!row) return null;
    const r = JSON.parse(this.open(row.secret_sealed, `${integrationId}:prekey:${keyId}`));
    return { keyId, publicKey: u(r.publicKey), secretKey: u(r.secretKey) };
  }

  async prekeyCount(integrationId: string): Promise<number> {
    return Number(
      (
        await this.pool.query<{ n: string }>('SELECT count(*) AS n FROM chatsvc_prekeys WHERE integration_id = $1', [
          integrationId,
        ])
      ).rows[0]!.n,
    );
  }

  // --- sessions and sender keys ------------------------------------------------------------------

  async session(integrationId: string, peer: string): Promise<{ session: Session; peer_fingerprint: string } | null> {
    const row = (
      await this.pool.query<{ session_sealed: string; peer_fingerprint: string }>(
        'SELECT session_sealed, peer_fingerprint FROM chatsvc_sessions WHERE integration_id = $1 AND peer_user_id = $2',
        [integrationId, peer],
      )
    ).rows[0];
    return row
      ? {
          session: deserializeSession(this.open(row.session_sealed, `${integrationId}:session:${peer}`)),
          peer_fingerprint: row.peer_fingerprint,
        }
      : null;
  }

  async saveSession(
    integrationId: string,
    peer: string,
    peerFingerprint: string,
    session: Session,
    at: Date,
    client: PoolClient | Pool = this.pool,
  ): Promise<void> {
    await client.query(
      `INSERT INTO chatsvc_sessions (integration_id, peer_user_id, peer_fingerprint, session_sealed, updated_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (integration_id, peer_user_id) DO UPDATE SET peer_fingerprint = $3, session_sealed = $4, updated_at = $5`,
      [
        integrationId,
        peer,
        peerFingerprint,
        this.seal(serializeSession(session), `${integrationId}:session:${peer}`),
        at,
      ],
    );
  }

  async receiver(
    integrationId: string,
    channelId: string,
    senderId: string,
    chainId: number,
  ): Promise<SenderKeyReceiver | null> {
    const row = (
      await this.pool.query<{ state_sealed: string }>(
        'SELECT state_sealed FROM chatsvc_sender_keys WHERE integration_id = $1 AND channel_id = $2 AND sender_id = $3 AND chain_id = $4 AND NOT own',
        [integrationId, channelId, senderId, chainId],
      )
    ).rows[0];
    return row
      ? deserializeSenderKeyReceiver(
          this.open(row.state_sealed, `${integrationId}:sk:${channelId}:${senderId}:${chainId}`),
        )
      : null;
  }

  /**
   * A receiver is stored without its cache of used keys: a redelivered message is caught by its
   * handled mark before decrypting, and the cache (up to 2000 keys) would make every message's
   * state write grow with the chain.
   */
  async saveReceiver(
    integrationId: string,
    channelId: string,
    full: SenderKeyReceiver,
    at: Date,
    client: PoolClient | Pool = this.pool,
    onlyIfNew = false,
  ): Promise<void> {
    const receiver: SenderKeyReceiver = { ...full, usedKeys: new Map() };
    const context = `${integrationId}:sk:${channelId}:${receiver.senderId}:${receiver.chainId}`;
    await client.query(
      `INSERT INTO chatsvc_sender_keys (integration_id, channel_id, sender_id, chain_id, own, state_sealed, updated_at) VALUES ($1, $2, $3, $4, false, $5, $6)
       ON CONFLICT (integration_id, channel_id, sender_id, chain_id) DO ${onlyIfNew ? 'NOTHING' : 'UPDATE SET state_sealed = $5, updated_at = $6'}`,
      [
        integrationId,
        channelId,
        receiver.senderId,
        receiver.chainId,
        this.seal(serializeSenderKeyReceiver(receiver), context),
        at,
      ],
    );
  }

  async ownSenderKey(integrationId: string, channelId: string): Promise<SenderKeyState | null> {
    const row = (
      await this.pool.query<{ state_sealed: string; chain_id: string }>(
        'SELECT state_sealed, chain_id FROM chatsvc_sender_keys WHERE integration_id = $1 AND channel_id = $2 AND own ORDER BY updated_at DESC LIMIT 1',
        [integrationId, channelId],
      )
    ).rows[0];
    return row
      ? deserializeSenderKey(this.open(row.state_sealed, `${integrationId}:own:${channelId}:${row.chain_id}`))
      : null;
  }

  /** The bot's chain for a channel: replaces any earlier one (old chains of the bot are not kept). */
  async saveOwnSenderKey(integrationId: string, channelId: string, state: SenderKeyState, at: Date): Promise<void> {
    await this.tx(async (client) => {
      await client.query(
        'DELETE FROM chatsvc_sender_keys WHERE integration_id = $1 AND channel_id = $2 AND own AND chain_id <> $3',
        [integrationId, channelId, state.chainId],
      );
      await client.query(
        `INSERT INTO chatsvc_sender_keys (integration_id, channel_id, sender_id, chain_id, own, state_sealed, updated_at) VALUES ($1, $2, $3, $4, true, $5, $6)
         ON CONFLICT (integration_id, channel_id, sender_id, chain_id) DO UPDATE SET state_sealed = $5, updated_at = $6`,
        [
          integrationId,
          channelId,
          state.senderId,
          state.chainId,
          this.seal(serializeSenderKey(state), `${integrationId}:own:${channelId}:${state.chainId}`),
          at,
        ],
      );
      await client.query('DELETE FROM chatsvc_rotations WHERE integration_id = $1 AND channel_id = $2', [
        integrationId,
        channelId,
      ]);
    });
  }

  async requireRotation(integrationId: string, channelId: string): Promise<void> {
    await this.pool.query(
      'INSERT INTO chatsvc_rotations (integration_id, channel_id) VALUES ($1, $2) ON CONFLICT DO NOTHING',
      [integrationId, channelId],
    );
  }

  async rotationRequired(integrationId: string, channelId: string): Promise<boolean> {
    return (
      (
        await this.pool.query('SELECT 1 FROM chatsvc_rotations WHERE integration_id = $1 AND channel_id = $2', [
          integrationId,
          channelId,
        ])
      ).rowCount! > 0
    );
  }

  // --- handled ids, cursors, held messages -------------------------------------------------------

  async handled(integrationId: string, messageId: string): Promise<boolean> {
    return (
      (
        await this.pool.query('SELECT 1 FROM chatsvc_handled WHERE integration_id = $1 AND message_id = $2', [
          integrationId,
          messageId,
        ])
      ).rowCount! > 0
    );
  }

  /**
   * Mark the message handled and store what decrypting it changed, in one transaction. False
   * (and nothing stored) when another delivery already handled it.
   */
  async commit(integrationId: string, change: DecryptCommit, at: Date): Promise<boolean> {
    return this.tx(async (client) => {
      const mark = await client.query(
        'INSERT INTO chatsvc_handled (integration_id, message_id, handled_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
        [integrationId, change.message_id, at],
      );
      if (mark.rowCount === 0) return false;
      if (change.session)
        await this.saveSession(
          integrationId,
          change.session.peer_user_id,
          change.session.peer_fingerprint,
          change.session.session,
          at,
          client,
        );
      if (change.receiver)
        await this.saveReceiver(integrationId, change.receiver.channel_id, change.receiver.receiver, at, client);
      if (change.used_prekey_id != null)
        await client.query('DELETE FROM chatsvc_prekeys WHERE integration_id = $1 AND key_id = $2', [
          integrationId,
          change.used_prekey_id,
        ]);
      if (change.cursor)
        await this.moveCursor(
          integrationId,
          change.cursor.channel_id,
          change.cursor.message_id,
          change.cursor.at,
          client,
        );
      await client.query('DELETE FROM chatsvc_held WHERE integration_id = $1 AND message_id = $2', [
        integrationId,
        change.message_id,
      ]);
      return true;
    });
  }

  /** The ids among `ids` already handled. */
  async handledAmong(integrationId: string, ids: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const { rows } = await this.pool.query<{ message_id: string }>(
      'SELECT message_id FROM chatsvc_handled WHERE integration_id = $1 AND message_id = ANY($2::uuid[])',
      [integrationId, ids],
    );
    return new Set(rows.map((r) => r.message_id));
  }

  /**
   * A batch of channel messages in one transaction: their handled marks, the receivers they
   * advanced (each once), the channels' cursors. Returns the ids this call marked (a concurrent
   * delivery's ids are left out).
   */
  async commitBatch(
    integrationId: string,
    batch: {
      message_ids: string[];
      receivers: { channel_id: string; receiver: SenderKeyReceiver }[];
      cursors: { channel_id: string; message_id: string; at: string }[];
    },
    at: Date,
  ): Promise<Set<string>> {
    if (!batch.message_ids.length && !batch.cursors.length) return new Set();
    return this.tx(async (client) => {
      const marked = batch.message_ids.length
        ? (
            await client.query<{ message_id: string }>(
              `INSERT INTO chatsvc_handled (integration_id, message_id, handled_at) SELECT $1, id, $3 FROM unnest($2::uuid[]) AS id
           ON CONFLICT DO NOTHING RETURNING message_id`,
              [integrationId, batch.message_ids, at],
            )
          ).rows.map((r) => r.message_id)
        : [];
      for (const r of batch.receivers) await this.saveReceiver(integrationId, r.channel_id, r.receiver, at, client);
      for (const c of batch.cursors) await this.moveCursor(integrationId, c.channel_id, c.message_id, c.at, client);
      if (marked.length)
        await client.query('DELETE FROM chatsvc_held WHERE integration_id = $1 AND message_id = ANY($2::uuid[])', [
          integrationId,
          marked,
        ]);
      return new Set(marked);
    });
  }

  async moveCursor(
    integrationId: string,
    channelId: string,
    messageId: string,
    at: string,
    client: PoolClient | Pool = this.pool,
  ): Promise<void> {
    await client.query(
      `INSERT INTO chatsvc_cursors (integration_id, channel_id, last_message_id, last_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (integration_id, channel_id) DO UPDATE SET last_message_id = $3, last_at = $4 WHERE chatsvc_cursors.last_at <= $4`,
      [integrationId, channelId, messageId, at],
    );
  }

  async cursor(integrationId: string, channelId: string): Promise<{ last_message_id: string; last_at: Date } | null> {
    return (
      (
        await this.pool.query<{ last_message_id: string; last_at: Date }>(
          'SELECT last_message_id, last_at FROM chatsvc_cursors WHERE integration_id = $1 AND channel_id = $2',
          [integrationId, channelId],
        )
      ).rows[0] ?? null
    );
  }

  /** Hold a message whose chain is unknown: at most `max` per channel (the oldest go), none older than `ttlMs`. */
  async hold(
    integrationId: string,
    channelId: string,
    messageId: string,
    message: Record<string, unknown>,
    at: Date,
    max: number,
    ttlMs: number,
  ): Promise<void> {
    await this.tx(async (client) => {
      await client.query('DELETE FROM chatsvc_held WHERE integration_id = $1 AND channel_id = $2 AND held_at < $3', [
        integrationId,
        channelId,
        new Date(at.getTime() - ttlMs),
      ]);
      await client.query(
        'INSERT INTO chatsvc_held (integration_id, channel_id, message_id, message, held_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
        [integrationId, channelId, messageId, JSON.stringify(message), at],
      );
      await client.query(
        `DELETE FROM chatsvc_held WHERE integration_id = $1 AND channel_id = $2 AND message_id IN (
           SELECT message_id FROM chatsvc_held WHERE integration_id = $1 AND channel_id = $2 ORDER BY held_at DESC, message_id OFFSET $3)`,
        [integrationId, channelId, max],
      );
    });
  }

  async held(integrationId: string, channelId: string, at: Date, ttlMs: number): Promise<HeldMessage[]> {
    return (
      await this.pool.query<HeldMessage>(
        'SELECT message_id, channel_id, message, held_at FROM chatsvc_held WHERE integration_id = $1 AND channel_id = $2 AND held_at >= $3 ORDER BY held_at, message_id',
        [integrationId, channelId, new Date(at.getTime() - ttlMs)],
      )
    ).rows;
  }

  async heldCount(integrationId: string, channelId: string): Promise<number> {
    return Number(
      (
        await this.pool.query<{ n: string }>(
          'SELECT count(*) AS n FROM chatsvc_held WHERE integration_id = $1 AND channel_id = $2',
          [integrationId, channelId],
        )
      ).rows[0]!.n,
    );
  }

  // --- webhooks and conversations ----------------------------------------------------------------

  async webhook(integrationId: string, channelId: string): Promise<{ webhook_id: string; token: string } | null> {
    const row = (
      await this.pool.query<{ webhook_id: string; token_sealed: string }>(
        'SELECT webhook_id, token_sealed FROM chatsvc_webhooks WHERE integration_id = $1 AND channel_id = $2',
        [integrationId, channelId],
      )
    ).rows[0];
    return row
      ? { webhook_id: row.webhook_id, token: this.open(row.token_sealed, `${integrationId}:webhook:${channelId}`) }
      : null;
  }

  async saveWebhook(integrationId: string, channelId: string, webhookId: string, token: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO chatsvc_webhooks (integration_id, channel_id, webhook_id, token_sealed) VALUES ($1, $2, $3, $4)
       ON CONFLICT (integration_id, channel_id) DO UPDATE SET webhook_id = $3, token_sealed = $4`,
      [integrationId, channelId, webhookId, this.seal(token, `${integrationId}:webhook:${channelId}`)],
    );
  }

  async dropWebhook(integrationId: string, channelId: string): Promise<void> {
    await this.pool.query('DELETE FROM chatsvc_webhooks WHERE integration_id = $1 AND channel_id = $2', [
      integrationId,
      channelId,
    ]);
  }

  async conversation(integrationId: string, channelId: string, senderId: string): Promise<string | null> {
    return (
      (
        await this.pool.query<{ conversation_id: string }>(
          'SELECT conversation_id FROM chatsvc_conversations WHERE integration_id = $1 AND channel_id = $2 AND sender_id = $3',
          [integrationId, channelId, senderId],
        )
      ).rows[0]?.conversation_id ?? null
    );
  }

  async saveConversation(
    integrationId: string,
    channelId: string,
    senderId: string,
    conversationId: string,
  ): Promise<void> {
    await this.pool.query(
      `INSERT INTO chatsvc_conversations (integration_id, channel_id, sender_id, conversation_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (integration_id, channel_id, sender_id) DO UPDATE SET conversation_id = $4`,
      [integrationId, channelId, senderId, conversationId],
    );
  }

  /** Everything of an integration: keys, sessions, sender keys, cursors, webhooks (DELETE, and a failed connect). */
  async destroy(integrationId: string): Promise<void> {
    await this.tx(async (client) => {
      for (const table of [
        'chatsvc_devices',
        'chatsvc_prekeys',
        'chatsvc_sessions',
        'chatsvc_sender_keys',
        'chatsvc_rotations',
        'chatsvc_cursors',
        'chatsvc_handled',
        'chatsvc_held',
        'chatsvc_webhooks',
        'chatsvc_conversations',
      ]) {
        await client.query(`DELETE FROM ${table} WHERE integration_id = $1`, [integrationId]);
      }
    });
  }
}
