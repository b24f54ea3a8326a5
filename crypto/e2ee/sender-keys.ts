// Sender Keys for group messages (Encryption wire contract, "Sender Keys").
//
// A sender owns one chain: a random u32 `chain_id` and a 32-byte chain key. Each message uses the
// chain's message key for its iteration (HKDF(salt = chain key, ikm = 0x01, info =
// "chatsvc-sender-key-chain", 32)) and then advances the chain (ikm = 0x02). There is no AAD:
// group messages are authenticated by the chain key alone, which every member holds.
//
// A receiver starts from a distribution (the chain at some iteration) and follows the chain
// forward. It caches message keys, both for iterations it skipped over (out-of-order delivery)
// and for those it has decrypted, so that a duplicate delivery decrypts again from the cache, as
// the spec requires. The cache holds at most MAX_SKIP keys; when it is full, keys of messages
// already decrypted go first (oldest first), then the oldest skipped keys. An iteration that
// is behind the chain and not cached (before the distribution, or evicted) is refused.

import { E2eeError } from './errors.ts';
import { chainStep, KEY_BYTES, NONCE_BYTES, open, seal, utf8 } from './primitives.ts';
import { randomBytes, randomNonce } from './random.ts';
import {
  parseDistribution,
  parseSenderKeyMessage,
  senderId as checkSenderId,
  toWire,
  type SenderKeyDistribution,
  type SenderKeyMessage,
} from './wire.ts';

export const SENDER_KEY_INFO = 'chatsvc-sender-key-chain';
/** The most keys a receiver skips for one message, and the size of its key cache. */
export const SENDER_KEY_MAX_SKIP = 2000;

const INFO = utf8(SENDER_KEY_INFO);

/** The sender's own chain. Mutated in place by encryptGroup. */
export interface SenderKeyState {
  readonly senderId: string;
  readonly chainId: number;
  readonly chainKey: Uint8Array;
  /** The iteration the next message will use. */
  readonly iteration: number;
}

/** One member's view of another member's chain. Mutated in place by decryptGroup on success. */
export interface SenderKeyReceiver {
  readonly senderId: string;
  readonly chainId: number;
  readonly chainKey: Uint8Array;
  /** The first iteration not yet derived from the chain. */
  readonly iteration: number;
  /** Keys of iterations skipped over and not yet used, oldest first. */
  readonly skippedKeys: ReadonlyMap<number, Uint8Array>;
  /** Keys of iterations already decrypted, kept for duplicates, oldest first. */
  readonly usedKeys: ReadonlyMap<number, Uint8Array>;
}

type MutableSender = { -readonly [K in keyof SenderKeyState]: SenderKeyState[K] };
type MutableReceiver = { -readonly [K in keyof SenderKeyReceiver]: SenderKeyReceiver[K] } & {
  skippedKeys: Map<number, Uint8Array>;
  usedKeys: Map<number, Uint8Array>;
};

/** A new chain: `chain_id` from 4 random bytes (big-endian u32), then 32 random bytes of chain key. */
export function createSenderKey(senderId: string): SenderKeyState {
  checkSenderId(senderId, 'senderId', (message) => {
    throw new E2eeError('invalid_argument', message);
  });
  const id = randomBytes(4);
  const chainId = ((id[0]! << 24) | (id[1]! << 16) | (id[2]! << 8) | id[3]!) >>> 0;
  return { senderId, chainId, chainKey: randomBytes(KEY_BYTES), iteration: 0 };
}

/** The wire distribution of the chain as it stands: receivers can decrypt from `iteration` on. */
export function senderKeyDistribution(state: SenderKeyState): SenderKeyDistribution {
  return {
    chain_id: state.chainId,
    iteration: state.iteration,
    chain_key: toWire(state.chainKey),
    sender_id: state.senderId,
  };
}

export function createSenderKeyReceiver(distribution: SenderKeyDistribution): SenderKeyReceiver {
  const d = parseDistribution(distribution);
  return {
    senderId: d.senderId,
    chainId: d.chainId,
    chainKey: d.chainKey,
    iteration: d.iteration,
    skippedKeys: new Map(),
    usedKeys: new Map(),
  };
}

export function encryptGroup(state: SenderKeyState, plaintext: Uint8Array): SenderKeyMessage {
  if (!(plaintext instanceof Uint8Array)) throw new E2eeError('invalid_argument', 'plaintext must be a Uint8Array');
  const { messageKey, nextChainKey } = chainStep(state.chainKey, INFO);
  const nonce = randomNonce(NONCE_BYTES);
  const ciphertext = seal(messageKey, nonce, plaintext);
  const iteration = state.iteration;
  const mutable = state as MutableSender;
  mutable.chainKey = nextChainKey;
  mutable.iteration = iteration + 1;
  return {
    v: 1,
    sk: true,
    message: { chain_id: state.chainId, iteration, ciphertext: toWire(ciphertext), nonce: toWire(nonce) },
  };
}

/** Decrypts a message of the receiver's chain; on any failure it throws and the receiver is unchanged. */
export function decryptGroup(receiver: SenderKeyReceiver, message: SenderKeyMessage): Uint8Array {
  const m = parseSenderKeyMessage(message);
  if (m.chainId !== receiver.chainId) {
    throw new E2eeError(
      'chain_mismatch',
      `message is on chain ${m.chainId}, this receiver follows chain ${receiver.chainId}`,
    );
  }
  const state = receiver as MutableReceiver;

  const skipped = state.skippedKeys.get(m.iteration);
  const used = skipped ?? state.usedKeys.get(m.iteration);
  if (used) {
    const plaintext = open(used, m.nonce, m.ciphertext);
    if (skipped) {
      state.skippedKeys.delete(m.iteration);
      remember(state, m.iteration, skipped);
    }
    return plaintext;
  }
  if (m.iteration < state.iteration) {
    throw new E2eeError(
      'stale_iteration',
      `iteration ${m.iteration} is behind the chain (at ${state.iteration}) and its key is not cached`,
    );
  }
  if (m.iteration - state.iteration > SENDER_KEY_MAX_SKIP) {
    throw new E2eeError(
      'too_many_skipped',
      `message would skip ${m.iteration - state.iteration} keys, more than MAX_SKIP (${SENDER_KEY_MAX_SKIP})`,
    );
  }

  const newlySkipped: [number, Uint8Array][] = [];
  let chainKey = state.chainKey;
  for (let i = state.iteration; i < m.iteration; i++) {
    const step = chainStep(chainKey, INFO);
    newlySkipped.push([i, step.messageKey]);
    chainKey = step.nextChainKey;
  }
  const { messageKey, nextChainKey } = chainStep(chainKey, INFO);
  const plaintext = open(messageKey, m.nonce, m.ciphertext);

  state.chainKey = nextChainKey;
  state.iteration = m.iteration + 1;
  for (const [iteration, key] of newlySkipped) state.skippedKeys.set(iteration, key);
  remember(state, m.iteration, messageKey);
  return plaintext;
}

/** Caches a used key for duplicates, then trims the cache to MAX_SKIP (used keys go first). */
function remember(state: MutableReceiver, iteration: number, key: Uint8Array): void {
  state.usedKeys.set(iteration, key);
  for (const cache of [state.usedKeys, state.skippedKeys]) {
    for (const oldest of cache.keys()) {
      if (state.usedKeys.size + state.skippedKeys.size <= SENDER_KEY_MAX_SKIP) return;
      cache.delete(oldest);
    }
  }
}
