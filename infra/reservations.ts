// Uniqueness across aggregates (a username, an email): a reservation stream appended with
// `no_stream`. Whoever appends first owns the value; losing the race is the caller's 409.
// Emails are personal data, so their reservation streams are named by a hash, never the address.

import { hashToken } from '../crypto/tokens.ts';
import { DomainError } from '../domain/shared/decider.ts';
import { toAppend, type CommandContext } from './commands.ts';
import type { EventStore } from './eventstore/port.ts';
import { WrongExpectedRevisionError } from './eventstore/port.ts';

export type UniqueKind = 'username' | 'email';

export function reservationStream(kind: UniqueKind, value: string): string {
  const normal = value.trim().toLowerCase();
  return `${kind}_reservation-${kind === 'email' ? hashToken(normal) : normal}`;
}

/** Reserve `value` for `ownerId`; idempotent for the same owner, a DomainError conflict for another. */
export async function reserve(store: EventStore, kind: UniqueKind, value: string, ownerId: string, context: CommandContext): Promise<void> {
  const stream = reservationStream(kind, value);
  try {
    await store.append(stream, [toAppend({ type: 'UniqueValueReserved', data: { kind, owner_id: ownerId } }, context)], { expected: 'no_stream' });
  } catch (error) {
    if (!(error instanceof WrongExpectedRevisionError)) throw error;
    const [first] = await store.readStream(stream, { limit: 1 });
    if (first?.data.owner_id === ownerId) return;
    throw new DomainError('conflict', `${kind}_taken`, `${kind} is already taken`);
  }
}
