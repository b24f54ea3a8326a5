// The spec's wire objects (Encryption wire contract, "Wire messages", version 1) and the strict
// parsers that turn untrusted JSON into typed byte strings before any cryptography runs.
//
// On the wire byte strings are arrays of numbers; each one must be a plain array of integers
// 0-255 of exactly the expected length (a ciphertext: at least the 16-byte tag). Counters and
// key ids are non-negative safe integers; `chain_id` is a u32. Unknown extra fields are ignored:
// nothing reads them and nothing authenticates them, so they cannot change a result. (The DM
// header is authenticated, but as bytes rebuilt from its three known fields, never as received.)

import { E2eeError } from './errors.ts';
import { KEY_BYTES, NONCE_BYTES, SIGNATURE_BYTES, TAG_BYTES } from './primitives.ts';

export const WIRE_VERSION = 1;
const U32_MAX = 0xffff_ffff;

// --- wire shapes (what JSON.stringify sends and JSON.parse returns) ----------------------------

export interface X3dhWire {
  identity_key: number[];
  ephemeral_key: number[];
  signed_prekey_id: number;
  one_time_prekey_id: number | null;
}

export interface DmHeaderWire {
  ratchet_key: number[];
  previous_chain_length: number;
  message_number: number;
}

export interface DmMessage {
  v: 1;
  /** First message of a session only. */
  x3dh?: X3dhWire;
  header: DmHeaderWire;
  /** ChaCha20-Poly1305 output: encrypted bytes followed by the 16-byte tag. */
  ciphertext: number[];
  nonce: number[];
}

export interface SenderKeyMessage {
  v: 1;
  sk: true;
  message: { chain_id: number; iteration: number; ciphertext: number[]; nonce: number[] };
}

/** The chat service's "Key bundle response". `one_time_prekey` is null or absent when none is left. */
export interface KeyBundle {
  identity_key: number[];
  signed_prekey: { key_id: number; public_key: number[]; signature: number[] };
  one_time_prekey?: { key_id: number; public_key: number[] } | null;
}

export interface SenderKeyDistribution {
  chain_id: number;
  iteration: number;
  chain_key: number[];
  sender_id: string;
}

// --- parsed forms -----------------------------------------------------------------------------

export interface ParsedX3dh {
  identityKey: Uint8Array;
  ephemeralKey: Uint8Array;
  signedPrekeyId: number;
  oneTimePrekeyId: number | null;
}

export interface ParsedHeader {
  ratchetKey: Uint8Array;
  previousChainLength: number;
  messageNumber: number;
}

export interface ParsedDm {
  x3dh: ParsedX3dh | null;
  header: ParsedHeader;
  ciphertext: Uint8Array;
  nonce: Uint8Array;
}

export interface ParsedGroupMessage {
  chainId: number;
  iteration: number;
  ciphertext: Uint8Array;
  nonce: Uint8Array;
}

export interface ParsedBundle {
  identityKey: Uint8Array;
  signedPrekey: { keyId: number; publicKey: Uint8Array; signature: Uint8Array };
  oneTimePrekey: { keyId: number; publicKey: Uint8Array } | null;
}

export interface ParsedDistribution {
  chainId: number;
  iteration: number;
  chainKey: Uint8Array;
  senderId: string;
}

// --- field readers ----------------------------------------------------------------------------

type Fail = (message: string) => never;

const wireFail: Fail = (message) => {
  throw new E2eeError('invalid_message', message);
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function record(value: unknown, field: string, fail: Fail = wireFail): Record<string, unknown> {
  if (!isRecord(value)) fail(`${field} must be an object`);
  return value as Record<string, unknown>;
}

/** Exactly `length` bytes (or, with `{ min }`, at least `min`), as a fresh Uint8Array. */
export function bytes(
  value: unknown,
  field: string,
  length: number | { min: number },
  fail: Fail = wireFail,
): Uint8Array {
  if (!Array.isArray(value)) fail(`${field} must be an array of byte values`);
  const array = value as unknown[];
  if (typeof length === 'number' ? array.length !== length : array.length < length.min) {
    fail(
      `${field} must be ${typeof length === 'number' ? `exactly ${length}` : `at least ${length.min}`} bytes, got ${array.length}`,
    );
  }
  const out = new Uint8Array(array.length);
  for (let i = 0; i < array.length; i++) {
    const byte = array[i];
    if (typeof byte !== 'number' || !Number.isInteger(byte) || byte < 0 || byte > 255)
      fail(`${field}[${i}] is not a byte value 0-255`);
    out[i] = byte as number;
  }
  return out;
}

/** A non-negative safe integer (counters, key ids), at most `max`. */
export function count(value: unknown, field: string, fail: Fail = wireFail, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > max) {
    fail(`${field} must be an integer from 0 to ${max}`);
  }
  return value as number;
}

export const u32 = (value: unknown, field: string, fail: Fail = wireFail): number => count(value, field, fail, U32_MAX);

function version(value: Record<string, unknown>, what: string): void {
  if (value.v !== WIRE_VERSION) {
    throw new E2eeError(
      'unsupported_version',
      `${what} has v ${JSON.stringify(value.v ?? null)?.slice(0, 16)}, this library speaks v ${WIRE_VERSION}`,
    );
  }
}

export function senderId(value: unknown, field: string, fail: Fail = wireFail): string {
  if (typeof value !== 'string' || value.length === 0) fail(`${field} must be a non-empty string`);
  return value as string;
}

// --- parsers ----------------------------------------------------------------------------------

export function parseX3dh(value: unknown, field = 'x3dh', fail: Fail = wireFail): ParsedX3dh {
  const x = record(value, field, fail);
  return {
    identityKey: bytes(x.identity_key, `${field}.identity_key`, KEY_BYTES, fail),
    ephemeralKey: bytes(x.ephemeral_key, `${field}.ephemeral_key`, KEY_BYTES, fail),
    signedPrekeyId: count(x.signed_prekey_id, `${field}.signed_prekey_id`, fail),
    oneTimePrekeyId:
      x.one_time_prekey_id === null ? null : count(x.one_time_prekey_id, `${field}.one_time_prekey_id`, fail),
  };
}

export function parseDmMessage(value: unknown): ParsedDm {
  const m = record(value, 'DM message');
  version(m, 'DM message');
  const h = record(m.header, 'header');
  return {
    // Absent on all but the first message; null is read as absent, as other encoders may write it.
    x3dh: m.x3dh === undefined || m.x3dh === null ? null : parseX3dh(m.x3dh),
    header: {
      ratchetKey: bytes(h.ratchet_key, 'header.ratchet_key', KEY_BYTES),
      previousChainLength: count(h.previous_chain_length, 'header.previous_chain_length'),
      messageNumber: count(h.message_number, 'header.message_number'),
    },
    ciphertext: bytes(m.ciphertext, 'ciphertext', { min: TAG_BYTES }),
    nonce: bytes(m.nonce, 'nonce', NONCE_BYTES),
  };
}

export function parseSenderKeyMessage(value: unknown): ParsedGroupMessage {
  const m = record(value, 'sender key message');
  version(m, 'sender key message');
  if (m.sk !== true) wireFail('sk must be true');
  const inner = record(m.message, 'message');
  return {
    chainId: u32(inner.chain_id, 'message.chain_id'),
    iteration: count(inner.iteration, 'message.iteration'),
    ciphertext: bytes(inner.ciphertext, 'message.ciphertext', { min: TAG_BYTES }),
    nonce: bytes(inner.nonce, 'message.nonce', NONCE_BYTES),
  };
}

export function parseKeyBundle(value: unknown): ParsedBundle {
  const b = record(value, 'key bundle');
  const spk = record(b.signed_prekey, 'signed_prekey');
  const opk =
    b.one_time_prekey === undefined || b.one_time_prekey === null ? null : record(b.one_time_prekey, 'one_time_prekey');
  return {
    identityKey: bytes(b.identity_key, 'identity_key', KEY_BYTES),
    signedPrekey: {
      keyId: count(spk.key_id, 'signed_prekey.key_id'),
      publicKey: bytes(spk.public_key, 'signed_prekey.public_key', KEY_BYTES),
      signature: bytes(spk.signature, 'signed_prekey.signature', SIGNATURE_BYTES),
    },
    oneTimePrekey: opk && {
      keyId: count(opk.key_id, 'one_time_prekey.key_id'),
      publicKey: bytes(opk.public_key, 'one_time_prekey.public_key', KEY_BYTES),
    },
  };
}

export function parseDistribution(value: unknown): ParsedDistribution {
  const d = record(value, 'sender key distribution');
  return {
    chainId: u32(d.chain_id, 'chain_id'),
    iteration: count(d.iteration, 'iteration'),
    chainKey: bytes(d.chain_key, 'chain_key', KEY_BYTES),
    senderId: senderId(d.sender_id, 'sender_id'),
  };
}

/**
 * The header's bytes for the AAD: `JSON.stringify({ ratchet_key, previous_chain_length,
 * message_number })` with exactly these keys in this order, no whitespace, UTF-8. Spelled out by
 * hand because it is on every message's path; for byte arrays and safe integers it is the same
 * string JSON.stringify gives (the known-answer tests compare it with JSON.stringify's).
 */
export function headerJson(header: ParsedHeader): string {
  return `{"ratchet_key":[${header.ratchetKey.join(',')}],"previous_chain_length":${header.previousChainLength},"message_number":${header.messageNumber}}`;
}

/** A byte string as the wire's array of numbers. */
export function toWire(value: Uint8Array): number[] {
  const out = new Array<number>(value.length);
  for (let i = 0; i < value.length; i++) out[i] = value[i]!;
  return out;
}
