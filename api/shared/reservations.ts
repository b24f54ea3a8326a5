// Reserve a unique value, then create what owns it: two appends to two streams, which no store
// makes one here (EventStoreDB has no transaction across streams, and a process can stop between
// the two on either store). A creation that failed after its reservation leaves the value
// reserved for an owner that never came to exist; without more, that value would be taken for
// good. So the next creation of the value takes such a reservation over: it creates the owner
// under the reservation's owner id, and a retry completes what the failed attempt left.
//
// Why that is safe: the owner's stream is created with `no_stream` (the runner appends with the
// revision it read, here none), so the first attempt still in flight and any number of takers
// make one owner between them; the others are refused by the owner's decider (its `*_exists`),
// which the caller answers as the value being taken.

import { DomainError } from '../../domain/shared/decider.ts';
import { reservationDecider, reservationStream } from '../../domain/shared/reservation.ts';
import type { StreamCategory } from '../../domain/shared/streams.ts';
import type { CommandContext, CommandRunner } from '../../infra/commands.ts';

export interface Reservation {
  kind: string;
  /** The kind's reservation category, declared in its service's table. */
  category: StreamCategory;
  /** The normalised value, or its hash for personal data. */
  key: string;
  /** The owner this creation means to make. */
  ownerId: string;
  /** The stream of an owner: empty while that owner was never created. */
  ownerStream: (ownerId: string) => string;
}

/**
 * Reserve the value for `ownerId`; the id to create the owner under: `ownerId`, or the owner of a
 * reservation whose owner was never created. A reservation of a live owner is the decider's
 * `<kind>_taken` conflict, thrown.
 */
export async function reserveOrResume(
  commands: CommandRunner,
  r: Reservation,
  context: CommandContext,
): Promise<string> {
  const stream = reservationStream(r.category, r.key);
  try {
    await commands.run(stream, reservationDecider, { type: 'Reserve', kind: r.kind, owner_id: r.ownerId }, context);
    return r.ownerId;
  } catch (error) {
    if (!(error instanceof DomainError && error.kind === 'conflict')) throw error;
    const [reservation] = await commands.store.readStream(stream, { limit: 1 });
    const owner = reservation ? String(reservation.data.owner_id) : null;
    if (!owner || (await commands.store.readStream(r.ownerStream(owner), { limit: 1 })).length > 0) throw error;
    return owner;
  }
}

/** The conflict a creation under a resumed reservation answers when another attempt created the owner first. */
export const takenError = (kind: string) => new DomainError('conflict', `${kind}_taken`, `${kind} is already taken`);
