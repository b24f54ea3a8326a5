// Checking one event against the chain: what an audit-log entry that keeps its log position
// (GET /api/v1/agent-chat/audit) needs to be verified on its own. The event's hash must follow
// from the previous chain entry, and the chain must lead from it to a signed checkpoint: the
// events between are re-hashed (at most 1,000 by the checkpoint cadence, or up to the head).

import { chainHash, checkpointSignatureValid, GENESIS_HASH, publicKeyFromHex } from '../../crypto/audit.ts';
import type { EventStore } from '../eventstore/port.ts';
import { comparePositions, formatPosition, type Position } from '../eventstore/position.ts';
import { entryJsonOf } from './chainer.ts';
import type { ChainStore } from './chain-store.ts';

export type EventProof =
  | { ok: true; position: string; seq: string; hash: string; checkpoint: { position: string; at: string } | null }
  | { ok: false; position: string; reason: string };

export async function proveEvent(
  store: Pick<EventStore, 'readAll'>,
  chain: ChainStore,
  position: Position,
  publicKeyHex: string,
): Promise<EventProof> {
  const text = formatPosition(position);
  const fail = (reason: string): EventProof => ({ ok: false, position: text, reason });
  const link = await chain.linkAtOrBefore(position);
  if (!link || comparePositions(link.position, position) !== 0)
    return fail('no chain entry at this position (not chained yet, or no such event)');
  const previous = link.seq > 1n ? (await chain.links(link.seq - 2n, 1))[0]! : null;
  const [event] = await store.readAll({ after: previous?.position ?? 'start', limit: 1 });
  if (!event || comparePositions(event.position, position) !== 0)
    return fail('the log holds no event at this chained position');
  let hash = chainHash(previous?.hash ?? GENESIS_HASH, entryJsonOf(event));
  if (hash !== link.hash) return fail('the event does not match its chain hash');

  // From the event to the first checkpoint at or after it, every link must follow.
  const [checkpoint] = await chain.checkpoints(link.seq - 1n, 1);
  if (!checkpoint) return { ok: true, position: text, seq: link.seq.toString(), hash: link.hash, checkpoint: null };
  let after = event.position;
  let seq = link.seq;
  while (seq < checkpoint.seq) {
    const events = await store.readAll({ after, limit: Math.min(1000, Number(checkpoint.seq - seq)) });
    const links = await chain.links(seq, events.length);
    if (events.length === 0) return fail('the log ends before the checkpoint that covers this event');
    for (const [i, e] of events.entries()) {
      const l = links[i];
      if (!l || comparePositions(l.position, e.position) !== 0)
        return fail(`the chain and the log part at ${formatPosition(e.position)}`);
      hash = chainHash(hash, entryJsonOf(e));
      if (hash !== l.hash) return fail(`the chain breaks at ${formatPosition(e.position)}`);
      seq = l.seq;
      after = e.position;
    }
  }
  const signed = {
    position: formatPosition(checkpoint.position),
    hash: checkpoint.hash,
    at: checkpoint.at.toISOString(),
  };
  if (
    hash !== checkpoint.hash ||
    !checkpointSignatureValid(publicKeyFromHex(publicKeyHex), signed, checkpoint.signature)
  ) {
    return fail(`the checkpoint at ${signed.position} does not sign this chain`);
  }
  return {
    ok: true,
    position: text,
    seq: link.seq.toString(),
    hash: link.hash,
    checkpoint: { position: signed.position, at: signed.at },
  };
}
