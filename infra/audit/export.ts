// The log merged with its chain, in global order: what `orchard audit export` writes and what
// `orchard audit verify` (live) checks. Events appended after the chain's head (not chained yet)
// are left out; the caller reports how many.

import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { GENESIS_HASH } from '../../crypto/audit.ts';
import type { EventStore, RecordedEvent } from '../eventstore/port.ts';
import { comparePositions, formatPosition, type Position } from '../eventstore/position.ts';
import { entryJsonOf } from './chainer.ts';
import type { ChainLink, ChainStore, StoredCheckpoint } from './chain-store.ts';
import { EXPORT_FORMAT, eventLine, itemLine, type AuditItem } from './records.ts';

const PAGE = 1000;

export interface ExportOptions {
  /** Exclusive: events strictly after this position. */
  after?: Position;
  /** Events of other streams appear as their chain hash only (`link` lines). */
  streamPrefix?: string;
  publicKey: string | null;
  now: Date;
}

/** A paged reader that hands out one item at a time. */
function pager<T>(read: (last: T | null) => Promise<T[]>) {
  let buffer: T[] = [];
  let index = 0;
  let last: T | null = null;
  let done = false;
  return {
    async peek(): Promise<T | null> {
      if (index < buffer.length) return buffer[index]!;
      if (done) return null;
      buffer = await read(last);
      index = 0;
      if (buffer.length === 0) done = true;
      return buffer[0] ?? null;
    },
    take(): void {
      last = buffer[index++]!;
    },
  };
}

export async function* auditItems(
  store: EventStore,
  chain: ChainStore,
  options: ExportOptions,
): AsyncGenerator<AuditItem> {
  const head = await chain.head();
  const before = options.after ? await chain.linkAtOrBefore(options.after) : null;
  yield {
    kind: 'header',
    format: EXPORT_FORMAT,
    after: options.after ? formatPosition(options.after) : null,
    previous_hash: before?.hash ?? GENESIS_HASH,
    stream_prefix: options.streamPrefix ?? null,
    public_key: options.publicKey,
    exported_at: options.now.toISOString(),
  };
  if (!head) return;
  const startSeq = before?.seq ?? 0n;
  const links = pager<ChainLink>((last) => chain.links(last?.seq ?? startSeq, PAGE));
  const checkpoints = pager<StoredCheckpoint>((last) => chain.checkpoints(last?.seq ?? startSeq, PAGE));
  const events = pager<RecordedEvent>(async (last) => {
    const after = last?.position ?? options.after ?? 'start';
    const page = await store.readAll({ after, limit: PAGE });
    return page.filter((e) => comparePositions(e.position, head.position) <= 0);
  });
  const shown = (e: RecordedEvent) => !options.streamPrefix || e.stream.startsWith(options.streamPrefix);

  for (;;) {
    const link = await links.peek();
    const event = await events.peek();
    if (!link && !event) return;
    const order = link && event ? comparePositions(event.position, link.position) : event ? -1 : 1;
    if (order < 0) {
      events.take();
      yield { kind: 'event', position: formatPosition(event!.position), hash: null, entryJson: entryJsonOf(event!) };
      continue;
    }
    links.take();
    const position = formatPosition(link!.position);
    if (order === 0) {
      events.take();
      yield shown(event!)
        ? { kind: 'event', position, hash: link!.hash, entryJson: entryJsonOf(event!) }
        : { kind: 'link', position, hash: link!.hash };
    } else {
      yield { kind: 'missing', position, hash: link!.hash };
    }
    const checkpoint = await checkpoints.peek();
    if (checkpoint && checkpoint.seq === link!.seq) {
      checkpoints.take();
      yield {
        kind: 'checkpoint',
        position,
        hash: checkpoint.hash,
        at: checkpoint.at.toISOString(),
        public_key: checkpoint.publicKey,
        signature: checkpoint.signature,
      };
    }
  }
}

export function lineOf(item: AuditItem): string {
  if (item.kind === 'event')
    return item.hash
      ? eventLine(item.position, item.hash, item.entryJson)
      : `{"kind":"event","position":${JSON.stringify(item.position)},"hash":null,"entry":${item.entryJson}}`;
  return itemLine(item);
}

/** Write the items as JSON lines to `file`; returns how many events and checkpoints it holds. */
export async function writeExport(
  items: AsyncIterable<AuditItem>,
  file: string,
): Promise<{ events: number; checkpoints: number }> {
  const out = createWriteStream(file, { encoding: 'utf8', mode: 0o600 });
  let events = 0;
  let checkpoints = 0;
  try {
    for await (const item of items) {
      if (item.kind === 'event') events += 1;
      if (item.kind === 'checkpoint') checkpoints += 1;
      if (!out.write(lineOf(item) + '\n')) await once(out, 'drain');
    }
  } finally {
    out.end();
    await once(out, 'finish');
  }
  return { events, checkpoints };
}
