// The Double Ratchet (Encryption wire contract, "Double Ratchet") over one Session.
//
//   root step:  HKDF-SHA256(salt = root key, ikm = DH output, info = "chatsvc-ratchet", 64)
//               → new root key ‖ chain key
//   chain step: message key = HKDF(salt = chain key, ikm = 0x01, info = "chatsvc-msg-key", 32),
//               next chain key = HKDF(salt = chain key, ikm = 0x02, same info, 32)
//   AAD:        AD ‖ UTF-8 of {"ratchet_key":[...],"previous_chain_length":n,"message_number":n}
//
// Decryption never mutates the session until the message has authenticated: `planDecrypt`
// computes every change (new chains, new root key, newly skipped keys, the next ratchet key pair)
// into local values and returns them with a `commit` that applies them and cannot fail. A forged,
// replayed or malformed message therefore leaves the session exactly as it was.

import { E2eeError } from './errors.ts';
import {
  chainStep,
  concat,
  dh,
  equalBytes,
  generateX25519,
  hkdfSha256,
  KEY_BYTES,
  NONCE_BYTES,
  open,
  seal,
  toHex,
  utf8,
  type X25519KeyPair,
} from './primitives.ts';
import { randomNonce } from './random.ts';
import { headerJson, toWire, type DmMessage, type ParsedDm, type ParsedHeader, type ParsedX3dh } from './wire.ts';

export const RATCHET_INFO = 'chatsvc-ratchet';
export const MSG_KEY_INFO = 'chatsvc-msg-key';
/** The most message keys one chain may skip for one incoming message. */
export const MAX_SKIP = 1000;
/**
 * The most skipped keys a session keeps. One message may skip up to MAX_SKIP at the end of the
 * old receiving chain and up to MAX_SKIP at the start of the new one, so the store holds two
 * chains' worth; beyond that the oldest keys are dropped (their messages can no longer decrypt).
 */
export const MAX_SKIPPED_KEYS = 2 * MAX_SKIP;

const ROOT_INFO = utf8(RATCHET_INFO);
const CHAIN_INFO = utf8(MSG_KEY_INFO);

export interface Chain {
  readonly chainKey: Uint8Array;
  /** The number of the next message on this chain. */
  readonly messageNumber: number;
}

export interface SkippedKey {
  readonly ratchetKey: Uint8Array;
  readonly messageNumber: number;
  readonly messageKey: Uint8Array;
}

/**
 * One side of a pairwise conversation. Treat it as opaque: the library mutates it in place
 * (encryptDm, and decryptDm on success) and persists it with serializeSession. The fields are
 * readonly to callers and documented so that the serialised shape can be read against them.
 */
export interface Session {
  /** This side's Ed25519 identity public key. */
  readonly localIdentityKey: Uint8Array;
  /** The peer's Ed25519 identity public key (for fingerprints and safety numbers). */
  readonly remoteIdentityKey: Uint8Array;
  /** X3DH's AD: initiator identity key ‖ responder identity key. */
  readonly associatedData: Uint8Array;
  readonly rootKey: Uint8Array;
  /** This side's current ratchet key pair (DHs). */
  readonly ratchetKeyPair: X25519KeyPair;
  /** The peer's current ratchet public key (DHr). */
  readonly remoteRatchetKey: Uint8Array | null;
  readonly sendingChain: Chain | null;
  readonly receivingChain: Chain | null;
  /** PN: the length of this side's previous sending chain. */
  readonly previousChainLength: number;
  /** Keys of messages skipped over, oldest first, keyed by `skippedKeyId`. */
  readonly skippedKeys: ReadonlyMap<string, SkippedKey>;
  /** The initiator's X3DH parameters, until the first message has carried them. */
  readonly pendingX3dh: ParsedX3dh | null;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type SessionState = Mutable<Omit<Session, 'skippedKeys'>> & { skippedKeys: Map<string, SkippedKey> };

export const skippedKeyId = (ratchetKey: Uint8Array, messageNumber: number): string =>
  `${toHex(ratchetKey)}:${messageNumber}`;

function rootStep(rootKey: Uint8Array, dhOutput: Uint8Array): { rootKey: Uint8Array; chainKey: Uint8Array } {
  const out = hkdfSha256(dhOutput, rootKey, ROOT_INFO, 2 * KEY_BYTES);
  return { rootKey: out.slice(0, KEY_BYTES), chainKey: out.slice(KEY_BYTES) };
}

/** The initiator's start: a new ratchet key pair, and the sending chain from DH(it, SPK_B). */
export function initiatorSession(
  localIdentityKey: Uint8Array,
  remoteIdentityKey: Uint8Array,
  associatedData: Uint8Array,
  sharedSecret: Uint8Array,
  signedPrekey: Uint8Array,
  x3dh: ParsedX3dh,
): Session {
  const ratchetKeyPair = generateX25519();
  const root = rootStep(sharedSecret, dh(ratchetKeyPair.secretKey, signedPrekey));
  return {
    localIdentityKey,
    remoteIdentityKey,
    associatedData,
    rootKey: root.rootKey,
    ratchetKeyPair,
    remoteRatchetKey: signedPrekey,
    sendingChain: { chainKey: root.chainKey, messageNumber: 0 },
    receivingChain: null,
    previousChainLength: 0,
    skippedKeys: new Map(),
    pendingX3dh: x3dh,
  };
}

/** The responder's start: its signed prekey pair as ratchet key, SK as root key, no chains. */
export function responderSession(
  localIdentityKey: Uint8Array,
  remoteIdentityKey: Uint8Array,
  associatedData: Uint8Array,
  sharedSecret: Uint8Array,
  signedPrekey: X25519KeyPair,
): Session {
  return {
    localIdentityKey,
    remoteIdentityKey,
    associatedData,
    rootKey: sharedSecret,
    ratchetKeyPair: { publicKey: signedPrekey.publicKey, secretKey: signedPrekey.secretKey },
    remoteRatchetKey: null,
    sendingChain: null,
    receivingChain: null,
    previousChainLength: 0,
    skippedKeys: new Map(),
    pendingX3dh: null,
  };
}

function aad(session: Session, header: ParsedHeader): Uint8Array {
  return concat(session.associatedData, utf8(headerJson(header)));
}

export function ratchetEncrypt(session: Session, plaintext: Uint8Array): DmMessage {
  const chain = session.sendingChain;
  if (!chain)
    throw new E2eeError(
      'invalid_argument',
      'session has no sending chain (a responder session is created by its first message)',
    );
  const { messageKey, nextChainKey } = chainStep(chain.chainKey, CHAIN_INFO);
  const header: ParsedHeader = {
    ratchetKey: session.ratchetKeyPair.publicKey,
    previousChainLength: session.previousChainLength,
    messageNumber: chain.messageNumber,
  };
  const nonce = randomNonce(NONCE_BYTES);
  const ciphertext = seal(messageKey, nonce, plaintext, aad(session, header));
  const x3dh = session.pendingX3dh;

  const state = session as SessionState;
  state.sendingChain = { chainKey: nextChainKey, messageNumber: chain.messageNumber + 1 };
  state.pendingX3dh = null; // only the first message carries it

  const wireHeader = {
    ratchet_key: toWire(header.ratchetKey),
    previous_chain_length: header.previousChainLength,
    message_number: header.messageNumber,
  };
  if (!x3dh) return { v: 1, header: wireHeader, ciphertext: toWire(ciphertext), nonce: toWire(nonce) };
  return {
    v: 1,
    x3dh: {
      identity_key: toWire(x3dh.identityKey),
      ephemeral_key: toWire(x3dh.ephemeralKey),
      signed_prekey_id: x3dh.signedPrekeyId,
      one_time_prekey_id: x3dh.oneTimePrekeyId,
    },
    header: wireHeader,
    ciphertext: toWire(ciphertext),
    nonce: toWire(nonce),
  };
}

/** Advances `chain` to message `until`, collecting the keys passed over into `into`. */
function skipTo(chain: Chain, until: number, ratchetKey: Uint8Array, into: SkippedKey[]): Chain {
  if (until - chain.messageNumber > MAX_SKIP) {
    throw new E2eeError(
      'too_many_skipped',
      `message would skip ${until - chain.messageNumber} keys, more than MAX_SKIP (${MAX_SKIP})`,
    );
  }
  let { chainKey, messageNumber } = chain;
  while (messageNumber < until) {
    const step = chainStep(chainKey, CHAIN_INFO);
    into.push({ ratchetKey, messageNumber, messageKey: step.messageKey });
    chainKey = step.nextChainKey;
    messageNumber += 1;
  }
  return { chainKey, messageNumber };
}

/**
 * Decrypts `message` without touching `session`; `commit()` then applies the state changes.
 * Order, as the spec: a skipped key first; on a new ratchet key, skip the old receiving chain to
 * `previous_chain_length` and do the DH ratchet step; skip to `message_number`; derive; open.
 */
export function planDecrypt(session: Session, message: ParsedDm): { plaintext: Uint8Array; commit: () => void } {
  const { header } = message;
  const messageAad = aad(session, header);
  const state = session as SessionState;

  if (state.skippedKeys.size > 0) {
    const id = skippedKeyId(header.ratchetKey, header.messageNumber);
    const skipped = state.skippedKeys.get(id);
    if (skipped) {
      const plaintext = open(skipped.messageKey, message.nonce, message.ciphertext, messageAad);
      return { plaintext, commit: () => void state.skippedKeys.delete(id) };
    }
  }

  const newlySkipped: SkippedKey[] = [];
  let next: Pick<
    SessionState,
    'rootKey' | 'ratchetKeyPair' | 'remoteRatchetKey' | 'sendingChain' | 'previousChainLength'
  >;
  let receiving: Chain;

  if (session.remoteRatchetKey !== null && equalBytes(header.ratchetKey, session.remoteRatchetKey)) {
    // The current receiving chain. (The initiator has none until the first reply: a message that
    // claims the responder's signed prekey as its ratchet key is not one the responder sends.)
    if (!session.receivingChain) throw new E2eeError('decrypt_failed', 'no receiving chain for this ratchet key');
    if (header.messageNumber < session.receivingChain.messageNumber) {
      throw new E2eeError('replay', `message ${header.messageNumber} of this chain was already decrypted`);
    }
    next = session;
    receiving = session.receivingChain;
  } else {
    // A new ratchet key from the peer: finish the old chain, then the DH ratchet step.
    if (session.receivingChain && session.remoteRatchetKey) {
      skipTo(session.receivingChain, header.previousChainLength, session.remoteRatchetKey, newlySkipped);
    }
    const received = rootStep(session.rootKey, dh(session.ratchetKeyPair.secretKey, header.ratchetKey));
    const ratchetKeyPair = generateX25519();
    const sending = rootStep(received.rootKey, dh(ratchetKeyPair.secretKey, header.ratchetKey));
    next = {
      rootKey: sending.rootKey,
      ratchetKeyPair,
      remoteRatchetKey: header.ratchetKey,
      sendingChain: { chainKey: sending.chainKey, messageNumber: 0 },
      previousChainLength: session.sendingChain?.messageNumber ?? 0,
    };
    receiving = { chainKey: received.chainKey, messageNumber: 0 };
  }

  receiving = skipTo(receiving, header.messageNumber, header.ratchetKey, newlySkipped);
  const { messageKey, nextChainKey } = chainStep(receiving.chainKey, CHAIN_INFO);
  const plaintext = open(messageKey, message.nonce, message.ciphertext, messageAad);

  return {
    plaintext,
    commit: () => {
      state.rootKey = next.rootKey;
      state.ratchetKeyPair = next.ratchetKeyPair;
      state.remoteRatchetKey = next.remoteRatchetKey;
      state.sendingChain = next.sendingChain;
      state.previousChainLength = next.previousChainLength;
      state.receivingChain = { chainKey: nextChainKey, messageNumber: header.messageNumber + 1 };
      for (const key of newlySkipped) state.skippedKeys.set(skippedKeyId(key.ratchetKey, key.messageNumber), key);
      // Map iteration is insertion order, so the first keys are the oldest.
      for (const id of state.skippedKeys.keys()) {
        if (state.skippedKeys.size <= MAX_SKIPPED_KEYS) break;
        state.skippedKeys.delete(id);
      }
    },
  };
}
