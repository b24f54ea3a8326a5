// Pairwise messages: X3DH to start a session, the Double Ratchet to carry it on. Every function
// validates its input completely before it changes anything, and a failed decrypt leaves the
// session as it was (ratchet.ts, planDecrypt).

import { E2eeError } from './errors.ts';
import { checkIdentity, checkPrekey, type IdentityKeyPair, type OneTimePrekey, type SignedPrekey } from './keys.ts';
import { generateX25519 } from './primitives.ts';
import { initiatorSession, planDecrypt, ratchetEncrypt, responderSession, type Session } from './ratchet.ts';
import { parseDmMessage, parseKeyBundle, type DmMessage, type KeyBundle } from './wire.ts';
import { x3dhInitiator, x3dhResponder } from './x3dh.ts';

/**
 * Starts a session with the owner of `bundle` (the chat service's key bundle response). Throws
 * `bad_signature` when the signed prekey's signature does not verify, `small_order_key` for a
 * small-order identity or prekey, `invalid_key` or `invalid_message` for a malformed bundle.
 */
export function createInitiatorSession(identity: IdentityKeyPair, bundle: KeyBundle): Session {
  checkIdentity(identity);
  const parsed = parseKeyBundle(bundle);
  const ephemeral = generateX25519();
  const { sharedSecret, associatedData } = x3dhInitiator(identity, parsed, ephemeral);
  return initiatorSession(
    identity.publicKey,
    parsed.identityKey,
    associatedData,
    sharedSecret,
    parsed.signedPrekey.publicKey,
    {
      identityKey: identity.publicKey,
      ephemeralKey: ephemeral.publicKey,
      signedPrekeyId: parsed.signedPrekey.keyId,
      oneTimePrekeyId: parsed.oneTimePrekey?.keyId ?? null,
    },
  );
}

/** Encrypts the next message; the session's first message also carries `x3dh`. */
export function encryptDm(session: Session, plaintext: Uint8Array): DmMessage {
  if (!(plaintext instanceof Uint8Array)) throw new E2eeError('invalid_argument', 'plaintext must be a Uint8Array');
  return ratchetEncrypt(session, plaintext);
}

/**
 * Accepts a session from its first message. The caller looks up the signed prekey and the
 * one-time prekey (or null) named by `first.x3dh` and, once this returns, deletes the one-time
 * prekey so it is never used twice. Throws `prekey_mismatch` when the message names other keys.
 */
export function createResponderSession(
  identity: IdentityKeyPair,
  signedPrekey: SignedPrekey,
  oneTimePrekey: OneTimePrekey | null,
  first: DmMessage,
): { session: Session; plaintext: Uint8Array } {
  checkIdentity(identity);
  checkPrekey(signedPrekey, 'signedPrekey');
  if (oneTimePrekey !== null) checkPrekey(oneTimePrekey, 'oneTimePrekey');
  const message = parseDmMessage(first);
  if (!message.x3dh) throw new E2eeError('invalid_message', 'the first message of a session must carry x3dh');
  const { sharedSecret, associatedData } = x3dhResponder(identity, signedPrekey, oneTimePrekey, message.x3dh);
  const session = responderSession(
    identity.publicKey,
    message.x3dh.identityKey,
    associatedData,
    sharedSecret,
    signedPrekey,
  );
  const { plaintext, commit } = planDecrypt(session, message);
  commit();
  return { session, plaintext };
}

/** Decrypts a message of this session; on any failure it throws and the session is unchanged. */
export function decryptDm(session: Session, message: DmMessage): Uint8Array {
  const parsed = parseDmMessage(message);
  const { plaintext, commit } = planDecrypt(session, parsed);
  commit();
  return plaintext;
}
