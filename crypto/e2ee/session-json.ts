// Sessions as JSON, for the client to store (Encryption wire contract: "Session state is
// serialised as JSON and stored client-side"). Byte strings are arrays of numbers, as on the
// wire; field names are the Session's in snake_case; `version` lets the shape change later.
//
//   {
//     "version": 1,
//     "local_identity_key": [32], "remote_identity_key": [32], "associated_data": [64],
//     "root_key": [32],
//     "ratchet_key_pair": { "public_key": [32], "secret_key": [32] },
//     "remote_ratchet_key": [32] | null,
//     "sending_chain": { "chain_key": [32], "message_number": n } | null,
//     "receiving_chain": { "chain_key": [32], "message_number": n } | null,
//     "previous_chain_length": n,
//     "skipped_keys": [ { "ratchet_key": [32], "message_number": n, "message_key": [32] }, ... oldest first ],
//     "pending_x3dh": { "identity_key", "ephemeral_key", "signed_prekey_id", "one_time_prekey_id" } | null
//   }
//
// The JSON holds secret keys: store it as the client stores any secret.

import { E2eeError } from './errors.ts';
import { concat, equalBytes, KEY_BYTES } from './primitives.ts';
import { MAX_SKIPPED_KEYS, skippedKeyId, type Chain, type Session, type SkippedKey } from './ratchet.ts';
import { bytes, count, parseX3dh, record, toWire } from './wire.ts';

export const SESSION_VERSION = 1;

const fail = (message: string): never => {
  throw new E2eeError('invalid_session', message);
};

const chainJson = (chain: Chain | null) =>
  chain && { chain_key: toWire(chain.chainKey), message_number: chain.messageNumber };

export function serializeSession(session: Session): string {
  const x3dh = session.pendingX3dh;
  return JSON.stringify({
    version: SESSION_VERSION,
    local_identity_key: toWire(session.localIdentityKey),
    remote_identity_key: toWire(session.remoteIdentityKey),
    associated_data: toWire(session.associatedData),
    root_key: toWire(session.rootKey),
    ratchet_key_pair: {
      public_key: toWire(session.ratchetKeyPair.publicKey),
      secret_key: toWire(session.ratchetKeyPair.secretKey),
    },
    remote_ratchet_key: session.remoteRatchetKey && toWire(session.remoteRatchetKey),
    sending_chain: chainJson(session.sendingChain),
    receiving_chain: chainJson(session.receivingChain),
    previous_chain_length: session.previousChainLength,
    skipped_keys: [...session.skippedKeys.values()].map((key) => ({
      ratchet_key: toWire(key.ratchetKey),
      message_number: key.messageNumber,
      message_key: toWire(key.messageKey),
    })),
    pending_x3dh: x3dh && {
      identity_key: toWire(x3dh.identityKey),
      ephemeral_key: toWire(x3dh.ephemeralKey),
      signed_prekey_id: x3dh.signedPrekeyId,
      one_time_prekey_id: x3dh.oneTimePrekeyId,
    },
  });
}

function chain(value: unknown, field: string): Chain | null {
  if (value === null) return null;
  const c = record(value, field, fail);
  return {
    chainKey: bytes(c.chain_key, `${field}.chain_key`, KEY_BYTES, fail),
    messageNumber: count(c.message_number, `${field}.message_number`, fail),
  };
}

/** Parses `serializeSession`'s output, checking every field; throws `invalid_session` otherwise. */
export function deserializeSession(json: string): Session {
  if (typeof json !== 'string') fail('serialised session must be a string');
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    fail('serialised session is not valid JSON');
  }
  const s = record(value, 'session', fail);
  if (s.version !== SESSION_VERSION) {
    throw new E2eeError(
      'unsupported_version',
      `serialised session has version ${JSON.stringify(s.version ?? null)?.slice(0, 16)}, expected ${SESSION_VERSION}`,
    );
  }
  const localIdentityKey = bytes(s.local_identity_key, 'local_identity_key', KEY_BYTES, fail);
  const remoteIdentityKey = bytes(s.remote_identity_key, 'remote_identity_key', KEY_BYTES, fail);
  const associatedData = bytes(s.associated_data, 'associated_data', 2 * KEY_BYTES, fail);
  // AD is initiator ‖ responder, so it is one of the two orders of the identity keys.
  if (
    !equalBytes(associatedData, concat(localIdentityKey, remoteIdentityKey)) &&
    !equalBytes(associatedData, concat(remoteIdentityKey, localIdentityKey))
  ) {
    fail('associated_data is not the two identity keys');
  }
  const pair = record(s.ratchet_key_pair, 'ratchet_key_pair', fail);
  if (!Array.isArray(s.skipped_keys)) fail('skipped_keys must be an array');
  const skippedList = s.skipped_keys as unknown[];
  if (skippedList.length > MAX_SKIPPED_KEYS) fail(`skipped_keys holds more than ${MAX_SKIPPED_KEYS} keys`);
  const skippedKeys = new Map<string, SkippedKey>();
  skippedList.forEach((entry, i) => {
    const k = record(entry, `skipped_keys[${i}]`, fail);
    const key: SkippedKey = {
      ratchetKey: bytes(k.ratchet_key, `skipped_keys[${i}].ratchet_key`, KEY_BYTES, fail),
      messageNumber: count(k.message_number, `skipped_keys[${i}].message_number`, fail),
      messageKey: bytes(k.message_key, `skipped_keys[${i}].message_key`, KEY_BYTES, fail),
    };
    skippedKeys.set(skippedKeyId(key.ratchetKey, key.messageNumber), key);
  });
  return {
    localIdentityKey,
    remoteIdentityKey,
    associatedData,
    rootKey: bytes(s.root_key, 'root_key', KEY_BYTES, fail),
    ratchetKeyPair: {
      publicKey: bytes(pair.public_key, 'ratchet_key_pair.public_key', KEY_BYTES, fail),
      secretKey: bytes(pair.secret_key, 'ratchet_key_pair.secret_key', KEY_BYTES, fail),
    },
    remoteRatchetKey:
      s.remote_ratchet_key === null ? null : bytes(s.remote_ratchet_key, 'remote_ratchet_key', KEY_BYTES, fail),
    sendingChain: chain(s.sending_chain, 'sending_chain'),
    receivingChain: chain(s.receiving_chain, 'receiving_chain'),
    previousChainLength: count(s.previous_chain_length, 'previous_chain_length', fail),
    skippedKeys,
    pendingX3dh: s.pending_x3dh === null ? null : parseX3dh(s.pending_x3dh, 'pending_x3dh', fail),
  };
}
