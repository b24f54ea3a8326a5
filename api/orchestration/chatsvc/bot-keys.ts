// The bot's end-to-end keys: the device made at connect (an identity, a signed prekey, 100
// one-time prekeys), and their upkeep while the socket runs (KeysLow, every connect and every
// supervisor pass): one-time prekeys topped back up to 100, the signed prekey rotated weekly.

import { generateIdentityKeyPair, generateOneTimePrekeys, generateSignedPrekey } from '../../../crypto/e2ee/index.ts';
import type { DeviceKeys } from '../../../infra/chatsvc/device-store.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import { restOf, type BotHost } from './bot-host.ts';

/** One-time prekeys registered at connect and kept topped up to. */
export const PREKEY_TARGET = 100;
/** A signed prekey is replaced after a week; the old one is kept 30 days more. */
export const SIGNED_PREKEY_ROTATE_MS = 7 * 86_400_000;
export const SIGNED_PREKEY_KEEP_MS = 30 * 86_400_000;

/** A new bot's device: the keys it keeps, its one-time prekeys, and the body that registers them. */
export function newDevice(botUserId: string, now: Date) {
  const identity = generateIdentityKeyPair();
  const signed = generateSignedPrekey(identity, 1);
  const prekeys = generateOneTimePrekeys(1, PREKEY_TARGET);
  const registration = {
    identity_key: Array.from(identity.publicKey),
    signed_prekey: {
      key_id: signed.keyId,
      public_key: Array.from(signed.publicKey),
      signature: Array.from(signed.signature),
    },
    one_time_prekeys: prekeys.map((p) => ({ key_id: p.keyId, public_key: Array.from(p.publicKey) })),
  };
  const keys: DeviceKeys = {
    bot_user_id: botUserId,
    identity,
    signed: [{ ...signed, created_at: now.toISOString(), retired_at: null }],
    next_prekey_id: PREKEY_TARGET + 1,
    next_signed_id: 2,
  };
  return { keys, prekeys, registration };
}

export class BotKeys {
  constructor(
    private readonly host: BotHost,
    private readonly integration: IntegrationRow,
  ) {}

  /**
   * One-time prekeys back to 100; the signed prekey rotated weekly (the old kept 30 days, so a
   * DM begun from a bundle fetched before the rotation still opens).
   */
  async maintain(): Promise<void> {
    const { store, deps } = this.host;
    const id = this.integration.integration_id;
    const keys = await store.keys(id);
    if (!keys) return;
    const client = restOf(this.host, this.integration);
    const now = deps.clock.now();
    const count = await client.call('GET', '/api/keys/prekeys/count');
    if (count.status === 200 && typeof count.body?.count === 'number' && count.body.count < PREKEY_TARGET) {
      const fresh = generateOneTimePrekeys(keys.next_prekey_id, Math.min(200, PREKEY_TARGET - count.body.count));
      keys.next_prekey_id += fresh.length;
      await store.saveKeys(id, keys, now);
      await store.addPrekeys(id, fresh);
      await client.call('POST', '/api/keys/prekeys/one-time', {
        prekeys: fresh.map((p) => ({ key_id: p.keyId, public_key: Array.from(p.publicKey) })),
      });
    }
    const current = keys.signed[0]!;
    if (now.getTime() - Date.parse(current.created_at) >= SIGNED_PREKEY_ROTATE_MS) {
      const next = generateSignedPrekey(keys.identity, keys.next_signed_id);
      keys.next_signed_id += 1;
      keys.signed = [
        { ...next, created_at: now.toISOString(), retired_at: null },
        { ...current, retired_at: now.toISOString() },
        ...keys.signed
          .slice(1)
          .filter((s) => s.retired_at && now.getTime() - Date.parse(s.retired_at) < SIGNED_PREKEY_KEEP_MS),
      ];
      const before = await store.keys(id);
      // Stored before it is published: the chat never hands out a signed prekey the bot lacks.
      await store.saveKeys(id, keys, now);
      const posted = await client.call('POST', '/api/keys/prekeys/signed', {
        key_id: next.keyId,
        public_key: Array.from(next.publicKey),
        signature: Array.from(next.signature),
      });
      if (posted.status === 401) return this.host.revoked(this.integration, 'socket');
      if (posted.status === 200 || posted.status === 201)
        deps.log.info('chatsvc_signed_prekey_rotated', { profile_id: this.integration.profile_id, key_id: next.keyId });
      else {
        // Not published: keep the old one current, so the next pass tries again.
        if (before) await store.saveKeys(id, { ...keys, signed: before.signed }, now);
        deps.log.warn('chatsvc_signed_prekey_rotation_failed', {
          profile_id: this.integration.profile_id,
          status: posted.status,
        });
      }
    }
  }
}
