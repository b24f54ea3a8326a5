// A chat account's public keys for X3DH (`chat.keys-<user uuid>`): the Ed25519 identity key, the
// signed prekey (rotated; the previous one stays listed for a grace period so first messages
// already in flight to it still work) and the one-time prekeys, each handed out at most once.
// Keys are public; byte strings are base64 here and in the read model. Signatures are checked
// before a command is built (crypto/, in the API layer), so this module stays pure.
//
// Uploads go through this aggregate (one-time prekey ids are unique per account). Handing a
// one-time prekey out is a claim on a stream of its own (`chat.prekey-<user uuid>_<key id>`,
// ./claim.ts), appended with `no_stream`: two concurrent fetches may pick the same prekey, one
// append loses and that fetch moves on to the next, so no prekey is handed out twice, and a
// fetch never reads a history that grows with every fetch before it.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { PublicPrekey, SignedPrekeyRecord, KeysEvent } from './events.ts';

/** How long a replaced signed prekey stays listed, so a first message already sent to it still opens. */
export const SIGNED_PREKEY_GRACE_MS = 7 * 24 * 60 * 60 * 1000;
/** The spec's batch limit for one upload. */
export const PREKEY_BATCH_MAX = 200;
/** Unconsumed one-time prekeys kept per account; an upload past this is refused. */
export const PREKEY_STORE_MAX = 1000;
/** The spec's "low prekey threshold": below it the owner's sockets get KeysLow. */
export const LOW_PREKEY_THRESHOLD = 25;

export type KeysCommand =
  | {
      type: 'RegisterKeys';
      user_id: string;
      identity_key: string;
      signed_prekey: SignedPrekeyRecord;
      one_time_prekeys: PublicPrekey[];
      at: string;
      /** The account registration completing an earlier attempt of its own (never the keys route, whose second call is 409). */
      resume?: boolean;
    }
  | { type: 'UploadSignedPrekey'; signed_prekey: SignedPrekeyRecord; at: string }
  /** `unconsumed`: how many of the account's one-time prekeys are not handed out yet (the read model's count). */
  | { type: 'UploadPrekeys'; prekeys: PublicPrekey[]; unconsumed: number; at: string }
  | { type: 'RemoveKeys'; at: string };

export interface KeysState {
  user_id: string | null;
  removed: boolean;
  identity_key: string | null;
  signed: SignedPrekeyRecord | null;
  /** Every one-time prekey id this account ever uploaded (ids are unique per account). */
  used_ids: Set<number>;
}

const initialState = (): KeysState => ({
  user_id: null,
  removed: false,
  identity_key: null,
  signed: null,
  used_ids: new Set(),
});

function evolve(state: KeysState, event: KeysEvent): KeysState {
  switch (event.type) {
    case 'IdentityKeyRegistered':
      return { ...state, user_id: event.data.user_id, identity_key: event.data.identity_key };
    case 'SignedPrekeyUploaded':
      return {
        ...state,
        signed: { key_id: event.data.key_id, public_key: event.data.public_key, signature: event.data.signature },
      };
    case 'PrekeysUploaded': {
      const used_ids = new Set(state.used_ids);
      for (const p of event.data.prekeys) used_ids.add(p.key_id);
      return { ...state, used_ids };
    }
    case 'KeysRemoved':
      return { ...state, removed: true, identity_key: null, signed: null };
  }
}

function live(state: KeysState): string {
  if (!state.user_id || state.removed) throw new DomainError('not_found', 'user_not_found', 'no such user');
  return state.user_id;
}

function checkBatch(state: KeysState, prekeys: PublicPrekey[], unconsumed: number): void {
  if (prekeys.length > PREKEY_BATCH_MAX)
    throw new DomainError('invalid', 'too_many_prekeys', `at most ${PREKEY_BATCH_MAX} one-time prekeys per upload`);
  const ids = prekeys.map((p) => p.key_id);
  if (new Set(ids).size !== ids.length)
    throw new DomainError('invalid', 'duplicate_prekey_id', 'one-time prekey ids repeat within the upload');
  const taken = ids.filter((id) => state.used_ids.has(id));
  if (taken.length)
    throw new DomainError('conflict', 'prekey_id_in_use', 'one-time prekey ids already uploaded by this account', {
      key_ids: taken,
    });
  if (unconsumed + prekeys.length > PREKEY_STORE_MAX) {
    throw new DomainError(
      'conflict',
      'prekey_store_full',
      `at most ${PREKEY_STORE_MAX} unconsumed one-time prekeys per account`,
      { remaining: unconsumed },
    );
  }
}

function decide(command: KeysCommand, state: KeysState): KeysEvent[] {
  switch (command.type) {
    case 'RegisterKeys': {
      // The same registration again (it failed after its keys, before its account): done already.
      if (command.resume && state.user_id === command.user_id && state.identity_key === command.identity_key) return [];
      if (state.user_id) throw new DomainError('conflict', 'keys_exist', 'keys already registered');
      checkBatch(state, command.one_time_prekeys, 0);
      const { user_id, at } = command;
      const events: KeysEvent[] = [
        { type: 'IdentityKeyRegistered', data: { user_id, identity_key: command.identity_key, at } },
        {
          type: 'SignedPrekeyUploaded',
          data: { user_id, ...command.signed_prekey, previous_key_id: null, previous_valid_until: null, at },
        },
      ];
      if (command.one_time_prekeys.length) {
        events.push({ type: 'PrekeysUploaded', data: { user_id, prekeys: command.one_time_prekeys, at } });
      }
      return events;
    }
    case 'UploadSignedPrekey': {
      const user_id = live(state);
      const next = command.signed_prekey;
      const current = state.signed;
      if (current && current.key_id === next.key_id) {
        if (current.public_key === next.public_key && current.signature === next.signature) return []; // a retried upload
        throw new DomainError(
          'conflict',
          'signed_prekey_id_in_use',
          'the current signed prekey already has this key_id',
        );
      }
      const validUntil = current ? new Date(Date.parse(command.at) + SIGNED_PREKEY_GRACE_MS).toISOString() : null;
      return [
        {
          type: 'SignedPrekeyUploaded',
          data: {
            user_id,
            ...next,
            previous_key_id: current?.key_id ?? null,
            previous_valid_until: validUntil,
            at: command.at,
          },
        },
      ];
    }
    case 'UploadPrekeys': {
      const user_id = live(state);
      checkBatch(state, command.prekeys, command.unconsumed);
      if (!command.prekeys.length) return [];
      return [{ type: 'PrekeysUploaded', data: { user_id, prekeys: command.prekeys, at: command.at } }];
    }
    case 'RemoveKeys': {
      if (!state.user_id || state.removed) return [];
      return [{ type: 'KeysRemoved', data: { user_id: state.user_id, at: command.at } }];
    }
  }
}

export const keysDecider: Decider<KeysState, KeysCommand, KeysEvent> = { initialState, evolve, decide };
