// Server-side checks of the public keys a chat client registers (Encryption wire contract,
// "X3DH"): the identity key must be a valid Ed25519 key that is not of small order, and the
// signed prekey's signature must verify, strictly (RFC 8032, no ZIP-215 leniency), over exactly
// its 32 public-key bytes. The same rules the e2ee library applies when a peer fetches a bundle,
// so the server never hands out a bundle its clients would refuse.

import { E2eeError } from './e2ee/errors.ts';
import { edPublicToX25519, edVerify } from './e2ee/primitives.ts';

export function validIdentityKey(identityKey: Uint8Array): boolean {
  if (identityKey.length !== 32) return false;
  try {
    edPublicToX25519(identityKey, 'identity_key');
    return true;
  } catch (error) {
    if (error instanceof E2eeError) return false;
    throw error;
  }
}

export function signedPrekeyVerifies(identityKey: Uint8Array, publicKey: Uint8Array, signature: Uint8Array): boolean {
  return (
    identityKey.length === 32 &&
    publicKey.length === 32 &&
    signature.length === 64 &&
    edVerify(signature, publicKey, identityKey)
  );
}
