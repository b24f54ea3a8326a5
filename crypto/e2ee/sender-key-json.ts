// Stored sender-key states: the sender's own chain and a receiver's view of another member's,
// as versioned JSON with byte strings as arrays of numbers (like session-json.ts). The JSON
// holds chain keys and cached message keys: store it like a secret.

import { E2eeError } from './errors.ts';
import type { SenderKeyReceiver, SenderKeyState } from './sender-keys.ts';

const VERSION = 1;

const bytes = (value: unknown, what: string): Uint8Array => {
  if (!Array.isArray(value) || value.length !== 32 || !value.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
    throw new E2eeError('invalid_session', `${what} must be 32 bytes`);
  }
  return Uint8Array.from(value as number[]);
};
const count = (value: unknown, what: string): number => {
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new E2eeError('invalid_session', `${what} must be a non-negative integer`);
  return value as number;
};
function parse(json: string, kind: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new E2eeError('invalid_session', 'stored sender key is not JSON');
  }
  const record = value as Record<string, unknown>;
  if (!record || typeof record !== 'object' || record.version !== VERSION || record.kind !== kind)
    throw new E2eeError('invalid_session', `not a stored ${kind} (version ${VERSION})`);
  if (typeof record.sender_id !== 'string' || !record.sender_id)
    throw new E2eeError('invalid_session', 'sender_id missing');
  return record;
}

export function serializeSenderKey(state: SenderKeyState): string {
  return JSON.stringify({
    version: VERSION,
    kind: 'sender',
    sender_id: state.senderId,
    chain_id: state.chainId,
    chain_key: Array.from(state.chainKey),
    iteration: state.iteration,
  });
}

export function deserializeSenderKey(json: string): SenderKeyState {
  const r = parse(json, 'sender');
  return {
    senderId: r.sender_id as string,
    chainId: count(r.chain_id, 'chain_id'),
    chainKey: bytes(r.chain_key, 'chain_key'),
    iteration: count(r.iteration, 'iteration'),
  };
}

export function serializeSenderKeyReceiver(receiver: SenderKeyReceiver): string {
  return JSON.stringify({
    version: VERSION,
    kind: 'receiver',
    sender_id: receiver.senderId,
    chain_id: receiver.chainId,
    chain_key: Array.from(receiver.chainKey),
    iteration: receiver.iteration,
    skipped: [...receiver.skippedKeys].map(([i, k]) => [i, Array.from(k)]),
    used: [...receiver.usedKeys].map(([i, k]) => [i, Array.from(k)]),
  });
}

export function deserializeSenderKeyReceiver(json: string): SenderKeyReceiver {
  const r = parse(json, 'receiver');
  const keys = (value: unknown, what: string) => {
    if (!Array.isArray(value)) throw new E2eeError('invalid_session', `${what} must be a list`);
    return new Map(
      value.map((entry) => {
        if (!Array.isArray(entry) || entry.length !== 2)
          throw new E2eeError('invalid_session', `${what} entries are [iteration, key]`);
        return [count(entry[0], `${what} iteration`), bytes(entry[1], `${what} key`)] as [number, Uint8Array];
      }),
    );
  };
  return {
    senderId: r.sender_id as string,
    chainId: count(r.chain_id, 'chain_id'),
    chainKey: bytes(r.chain_key, 'chain_key'),
    iteration: count(r.iteration, 'iteration'),
    skippedKeys: keys(r.skipped, 'skipped'),
    usedKeys: keys(r.used, 'used'),
  };
}
