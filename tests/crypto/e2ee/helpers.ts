// Shared setup for the e2ee suites: wire bundles from generated keys, a finished handshake, and
// an assertion for typed errors.

import * as assert from 'uvu/assert';
import {
  createInitiatorSession,
  createResponderSession,
  E2eeError,
  encryptDm,
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  type DmMessage,
  type E2eeErrorCode,
  type IdentityKeyPair,
  type KeyBundle,
  type OneTimePrekey,
  type Session,
  type SignedPrekey,
} from '../../../crypto/e2ee/index.ts';

export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
export const text = (data: Uint8Array): string => new TextDecoder().decode(data);
export const wire = (data: Uint8Array): number[] => Array.from(data);
/** A deep copy through JSON, as a message travels. */
export const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export function bundleOf(
  identity: IdentityKeyPair,
  signedPrekey: SignedPrekey,
  oneTimePrekey: OneTimePrekey | null,
): KeyBundle {
  return {
    identity_key: wire(identity.publicKey),
    signed_prekey: {
      key_id: signedPrekey.keyId,
      public_key: wire(signedPrekey.publicKey),
      signature: wire(signedPrekey.signature),
    },
    one_time_prekey: oneTimePrekey && { key_id: oneTimePrekey.keyId, public_key: wire(oneTimePrekey.publicKey) },
  };
}

export interface Handshake {
  alice: IdentityKeyPair;
  bob: IdentityKeyPair;
  signedPrekey: SignedPrekey;
  oneTimePrekey: OneTimePrekey | null;
  /** Alice's session (the initiator). */
  a: Session;
  /** Bob's session (the responder), after decrypting Alice's first message. */
  b: Session;
  first: DmMessage;
}

/** Alice starts a session with Bob and Bob accepts her first message ("hello"). */
export function handshake(withOneTimePrekey = true): Handshake {
  const alice = generateIdentityKeyPair();
  const bob = generateIdentityKeyPair();
  const signedPrekey = generateSignedPrekey(bob, 7);
  const oneTimePrekey = withOneTimePrekey ? generateOneTimePrekeys(40, 1)[0]! : null;
  const a = createInitiatorSession(alice, bundleOf(bob, signedPrekey, oneTimePrekey));
  const first = copy(encryptDm(a, bytes('hello')));
  const { session: b, plaintext } = createResponderSession(bob, signedPrekey, oneTimePrekey, first);
  assert.is(text(plaintext), 'hello');
  return { alice, bob, signedPrekey, oneTimePrekey, a, b, first };
}

/** Asserts that `work` throws an E2eeError with `code`. */
export function throwsCode(work: () => unknown, code: E2eeErrorCode): E2eeError {
  try {
    work();
  } catch (error) {
    assert.instance(error, E2eeError);
    assert.is((error as E2eeError).code, code, (error as Error).message);
    return error as E2eeError;
  }
  return assert.unreachable(`expected an E2eeError with code ${code}`) as never;
}
