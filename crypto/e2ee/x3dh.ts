// X3DH key agreement (Encryption wire contract, "X3DH"): the shared secret SK and the associated
// data AD that seed a Double Ratchet session.
//
//   DH1 = IK_A × SPK_B   DH2 = EK_A × IK_B   DH3 = EK_A × SPK_B   DH4 = EK_A × OPK_B (if any)
//   SK  = HKDF-SHA256(salt = 32 × 0x00, ikm = 32 × 0xFF ‖ DH1 ‖ DH2 ‖ DH3 [‖ DH4],
//                     info = "chatsvc-x3dh-shared-secret", 32)
//   AD  = IK_A ‖ IK_B   (the two Ed25519 identity public keys, initiator first: 64 bytes)
//
// Identity keys are Ed25519; their X25519 forms are the spec's conversions. Every DH refuses a
// small-order key, so no party can force SK to depend on fewer secrets than it should.

import { E2eeError } from './errors.ts';
import type { IdentityKeyPair, OneTimePrekey, SignedPrekey } from './keys.ts';
import {
  concat,
  dh,
  edPublicToX25519,
  edSecretToX25519,
  edVerify,
  hkdfSha256,
  KEY_BYTES,
  utf8,
  type X25519KeyPair,
} from './primitives.ts';
import type { ParsedBundle, ParsedX3dh } from './wire.ts';

export const X3DH_INFO = 'chatsvc-x3dh-shared-secret';

const INFO = utf8(X3DH_INFO);
const SALT = new Uint8Array(KEY_BYTES);
const FILLER = new Uint8Array(KEY_BYTES).fill(0xff);

export interface Agreement {
  sharedSecret: Uint8Array;
  associatedData: Uint8Array;
}

export function deriveSharedSecret(dhs: Uint8Array[]): Uint8Array {
  return hkdfSha256(concat(FILLER, ...dhs), SALT, INFO, KEY_BYTES);
}

/**
 * The initiator's half. Checks the bundle's identity key (a canonical, non-small-order Ed25519
 * point) and then the signed prekey's signature (strict RFC 8032, over exactly the 32 public-key
 * bytes) before any DH; the DHs then refuse small-order prekeys.
 */
export function x3dhInitiator(identity: IdentityKeyPair, bundle: ParsedBundle, ephemeral: X25519KeyPair): Agreement {
  const theirIdentity = edPublicToX25519(bundle.identityKey, 'bundle identity_key');
  const spk = bundle.signedPrekey;
  if (!edVerify(spk.signature, spk.publicKey, bundle.identityKey)) {
    throw new E2eeError('bad_signature', 'signed prekey signature does not verify under the bundle identity key');
  }
  const dhs = [
    dh(edSecretToX25519(identity.secretKey), spk.publicKey),
    dh(ephemeral.secretKey, theirIdentity),
    dh(ephemeral.secretKey, spk.publicKey),
  ];
  if (bundle.oneTimePrekey) dhs.push(dh(ephemeral.secretKey, bundle.oneTimePrekey.publicKey));
  return { sharedSecret: deriveSharedSecret(dhs), associatedData: concat(identity.publicKey, bundle.identityKey) };
}

/** The responder's half: the same four DHs with the roles mirrored, AD in the same order. */
export function x3dhResponder(
  identity: IdentityKeyPair,
  signedPrekey: SignedPrekey,
  oneTimePrekey: OneTimePrekey | null,
  x3dh: ParsedX3dh,
): Agreement {
  if (x3dh.signedPrekeyId !== signedPrekey.keyId) {
    throw new E2eeError(
      'prekey_mismatch',
      `first message uses signed prekey ${x3dh.signedPrekeyId}, not ${signedPrekey.keyId}`,
    );
  }
  if (x3dh.oneTimePrekeyId !== (oneTimePrekey?.keyId ?? null)) {
    throw new E2eeError(
      'prekey_mismatch',
      `first message uses one-time prekey ${x3dh.oneTimePrekeyId ?? 'none'}, not ${oneTimePrekey?.keyId ?? 'none'}`,
    );
  }
  const theirIdentity = edPublicToX25519(x3dh.identityKey, 'x3dh.identity_key');
  const dhs = [
    dh(signedPrekey.secretKey, theirIdentity),
    dh(edSecretToX25519(identity.secretKey), x3dh.ephemeralKey),
    dh(signedPrekey.secretKey, x3dh.ephemeralKey),
  ];
  if (oneTimePrekey) dhs.push(dh(oneTimePrekey.secretKey, x3dh.ephemeralKey));
  return { sharedSecret: deriveSharedSecret(dhs), associatedData: concat(x3dh.identityKey, identity.publicKey) };
}
