// Release manifests travel as DSSE envelopes (`payloadType`, base64 `payload`, `signatures`):
// Ed25519 over DSSE's pre-authentication encoding (PAE) of the exact payload bytes, so nothing
// is canonicalised and the bytes verified are the bytes parsed. Verification is strict RFC 8032
// (`zip215: false`), and a small-order public key is refused outright: with one, a signature
// can verify for many messages.

import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

export const MANIFEST_PAYLOAD_TYPE = 'application/vnd.orchard.manifest+json';

export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: { keyid?: string; sig: string }[];
}

/** DSSE v1 PAE: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal bytes. */
export function pae(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = utf8ToBytes(payloadType);
  return concatBytes(utf8ToBytes(`DSSEv1 ${type.length} `), type, utf8ToBytes(` ${payload.length} `), payload);
}

export class SignatureError extends Error {
  constructor(
    readonly code: 'invalid_key' | 'malformed' | 'signature_invalid',
    message: string,
  ) {
    super(message);
    this.name = 'SignatureError';
  }
}

/** A 32-byte Ed25519 public key that is a valid, canonical point of large order. */
export function checkReleasePublicKey(publicKey: Uint8Array): Uint8Array {
  if (publicKey.length !== 32) throw new SignatureError('invalid_key', 'a release public key is 32 bytes');
  let point;
  try {
    point = ed25519.Point.fromBytes(publicKey, false);
  } catch {
    throw new SignatureError('invalid_key', 'the release public key is not a valid Ed25519 point');
  }
  if (point.isSmallOrder()) throw new SignatureError('invalid_key', 'the release public key has small order');
  return publicKey;
}

export function parseKeyHex(text: string, length: number, what: string): Uint8Array {
  const hex = text.trim();
  if (!new RegExp(`^[0-9a-fA-F]{${length * 2}}$`).test(hex))
    throw new SignatureError('invalid_key', `${what} must be ${length * 2} hex characters`);
  return hexToBytes(hex.toLowerCase());
}

/** A new release signing key pair (hex): the secret is the 32-byte seed. */
export function generateReleaseKeyPair(): { secretKeyHex: string; publicKeyHex: string } {
  const { secretKey, publicKey } = ed25519.keygen();
  return { secretKeyHex: bytesToHex(secretKey), publicKeyHex: bytesToHex(publicKey) };
}

export const publicKeyOf = (secretKey: Uint8Array): Uint8Array => ed25519.getPublicKey(secretKey);

/** The key id DSSE carries: the first 16 hex characters of the public key (informational only). */
const keyIdOf = (publicKey: Uint8Array) => bytesToHex(publicKey).slice(0, 16);

export function signEnvelope(
  payload: Uint8Array,
  secretKey: Uint8Array,
  payloadType = MANIFEST_PAYLOAD_TYPE,
): DsseEnvelope {
  const sig = ed25519.sign(pae(payloadType, payload), secretKey);
  return {
    payloadType,
    payload: Buffer.from(payload).toString('base64'),
    signatures: [{ keyid: keyIdOf(publicKeyOf(secretKey)), sig: Buffer.from(sig).toString('base64') }],
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function decodeBase64(text: unknown, what: string): Uint8Array {
  if (typeof text !== 'string' || !BASE64.test(text)) throw new SignatureError('malformed', `${what} is not base64`);
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/** The envelope's shape, checked before any cryptography. */
export function parseEnvelope(value: unknown): DsseEnvelope {
  const v = value as Partial<DsseEnvelope> | null;
  if (
    !v ||
    typeof v !== 'object' ||
    typeof v.payloadType !== 'string' ||
    typeof v.payload !== 'string' ||
    !Array.isArray(v.signatures)
  ) {
    throw new SignatureError('malformed', 'not a DSSE envelope (payloadType, payload, signatures)');
  }
  for (const s of v.signatures) {
    if (!s || typeof s !== 'object' || typeof s.sig !== 'string')
      throw new SignatureError('malformed', 'a signature entry needs sig');
  }
  return v as DsseEnvelope;
}

/**
 * The payload bytes when one of the envelope's signatures verifies under `publicKey` for
 * `payloadType`; otherwise a SignatureError. Any signature by the pinned key suffices (key ids
 * are hints, never trusted).
 */
export function verifyEnvelope(
  envelope: DsseEnvelope,
  publicKey: Uint8Array,
  payloadType = MANIFEST_PAYLOAD_TYPE,
): Uint8Array {
  checkReleasePublicKey(publicKey);
  const payload = decodeBase64(envelope.payload, 'payload');
  if (envelope.payloadType !== payloadType)
    throw new SignatureError('signature_invalid', `payloadType must be ${payloadType}`);
  const message = pae(envelope.payloadType, payload);
  for (const entry of envelope.signatures) {
    let sig: Uint8Array;
    try {
      sig = decodeBase64(entry.sig, 'sig');
    } catch {
      continue;
    }
    if (sig.length !== 64) continue;
    try {
      if (ed25519.verify(sig, message, publicKey, { zip215: false })) return payload;
    } catch {
      // a malformed signature is simply not a valid one
    }
  }
  throw new SignatureError('signature_invalid', 'no signature verifies under the pinned release key');
}
