// End-to-end encryption for the chat service: X3DH, the Double Ratchet and Sender Keys, exactly
// as the spec's "Encryption wire contract" (../shared/spec/2-chat-service.md). Pure functions: no
// I/O, no configuration; randomness from crypto.getRandomValues. Byte strings are Uint8Array in
// the API and arrays of numbers in wire objects (DmMessage, SenderKeyMessage, KeyBundle,
// SenderKeyDistribution), which are ready for JSON.stringify and are validated strictly on input.
//
// Every failure is an E2eeError with a `code` (errors.ts). Decrypt functions leave their state
// untouched when they throw.

export { E2eeError, type E2eeErrorCode } from './errors.ts';
export {
  generateIdentityKeyPair,
  generateOneTimePrekeys,
  generateSignedPrekey,
  type IdentityKeyPair,
  type OneTimePrekey,
  type SignedPrekey,
} from './keys.ts';
export { createInitiatorSession, createResponderSession, decryptDm, encryptDm } from './dm.ts';
export { MAX_SKIP, MSG_KEY_INFO, RATCHET_INFO, type Chain, type Session, type SkippedKey } from './ratchet.ts';
export { deserializeSession, serializeSession } from './session-json.ts';
export {
  createSenderKey,
  createSenderKeyReceiver,
  decryptGroup,
  encryptGroup,
  SENDER_KEY_INFO,
  SENDER_KEY_MAX_SKIP,
  senderKeyDistribution,
  type SenderKeyReceiver,
  type SenderKeyState,
} from './sender-keys.ts';
export {
  deserializeSenderKey,
  deserializeSenderKeyReceiver,
  serializeSenderKey,
  serializeSenderKeyReceiver,
} from './sender-key-json.ts';
export { fingerprint, safetyNumber } from './safety.ts';
export { X3DH_INFO } from './x3dh.ts';
export type { DmMessage, KeyBundle, SenderKeyDistribution, SenderKeyMessage, X3dhWire, DmHeaderWire } from './wire.ts';
