// The chainer: extends the hash chain over every event of the log, in global order, once the
// event is visible to readers (so no event can later appear before it), and signs a checkpoint
// of the chain's head whenever 1,000 events were chained since the last one, or a minute passed
// with events left unsigned.
//
// Why after the fact rather than inside the append: the chain's order is the log's global
// order, which on PostgreSQL is settled only when transactions commit; hashing inside the append
// would serialise every writer on one lock. The chainer reads in pages and writes its links in
// one statement per page, so the append path pays nothing but the reads (bench/audit.ts).
//
// It works through the EventStore port only, so it chains either adapter's log. One process
// chains at a time (a session advisory lock, like a projection); a second writer would fail on
// the chain's primary key anyway.

import { createHash } from 'node:crypto';
import { chainEntryJson, chainHash, GENESIS_HASH, signCheckpoint, type SigningKey } from '../../crypto/audit.ts';
import type { Clock } from '../clock.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import type { EventStore, RecordedEvent } from '../eventstore/port.ts';
import { formatPosition } from '../eventstore/position.ts';
import type { Logger } from '../logging.ts';
import type { ChainLink, ChainStore, StoredCheckpoint } from './chain-store.ts';

export const CHECKPOINT_EVERY_EVENTS = 1000;
export const CHECKPOINT_EVERY_MS = 60_000;
const PAGE = 1000;
const POLL_MS = 250;
const STANDBY_POLL_MS = 2000;
const LOCK_KEY = createHash('sha256').update('orchard:audit-chainer').digest().readBigInt64BE(0).toString();

/** The chained fields of an event, as the chain hashes them. */
export function entryJsonOf(event: RecordedEvent): string {
  return chainEntryJson({
    stream: event.stream,
    revision: event.revision.toString(),
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    created_at: event.created_at.toISOString(),
  });
}

export class Chainer {
  private head: ChainLink | null | undefined;
  private lastCheckpoint: StoredCheckpoint | null | undefined;
  /** One chaining pass at a time in this process. */
  private turn: Promise<unknown> = Promise.resolve();
  private loop: Promise<void> | null = null;
  private stopped = false;
  private wake: () => void = () => {};

  constructor(
    private readonly store: EventStore,
    private readonly chain: ChainStore,
    private readonly pool: Pool,
    private readonly key: SigningKey,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  get publicKeyHex(): string {
    return this.key.publicKeyHex;
  }

  /** Chain in the background while this process holds the chainer's lock. */
  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    await this.turn.catch(() => {});
  }

  /**
   * Chain every event visible now, and sign a checkpoint if one is due; returns the events
   * chained. Callers that do not hold the lock (tests, the CLI) may call it too: a racing
   * writer makes one of the two fail on the chain's keys, never fork it.
   */
  catchUp(): Promise<number> {
    const pass = this.turn.then(() => this.pass());
    this.turn = pass.catch(() => {});
    return pass;
  }

  private async pass(): Promise<number> {
    this.head ??= await this.chain.head();
    this.lastCheckpoint ??= await this.chain.lastCheckpoint();
    let chained = 0;
    try {
      for (;;) {
        const events = await this.store.readAll({ after: this.head?.position ?? 'start', limit: PAGE });
        const links: ChainLink[] = [];
        const checkpoints: StoredCheckpoint[] = [];
        let previous: ChainLink | null = this.head;
        let signed: StoredCheckpoint | null = this.lastCheckpoint;
        for (const event of events) {
          const link: ChainLink = {
            seq: (previous?.seq ?? 0n) + 1n,
            position: event.position,
            hash: chainHash(previous?.hash ?? GENESIS_HASH, entryJsonOf(event)),
          };
          links.push(link);
          previous = link;
          if (link.seq - (signed?.seq ?? 0n) >= BigInt(CHECKPOINT_EVERY_EVENTS)) {
            signed = this.sign(link);
            checkpoints.push(signed);
          }
        }
        // A minute without a checkpoint while events wait unsigned: sign the head.
        if (
          previous &&
          previous.seq > (signed?.seq ?? 0n) &&
          this.clock.now().getTime() - (signed?.at.getTime() ?? 0) >= CHECKPOINT_EVERY_MS &&
          events.length < PAGE
        ) {
          signed = this.sign(previous);
          checkpoints.push(signed);
        }
        await this.chain.write(links, checkpoints);
        this.head = previous;
        this.lastCheckpoint = signed;
        chained += links.length;
        if (events.length < PAGE) return chained;
      }
    } catch (error) {
      // Whatever was in flight is unknown now: read the head again next time.
      this.head = undefined;
      this.lastCheckpoint = undefined;
      throw error;
    }
  }

  private sign(link: ChainLink): StoredCheckpoint {
    const at = this.clock.now();
    const checkpoint = { position: formatPosition(link.position), hash: link.hash, at: at.toISOString() };
    return {
      seq: link.seq,
      position: link.position,
      hash: link.hash,
      at,
      publicKey: this.key.publicKeyHex,
      signature: signCheckpoint(this.key, checkpoint),
    };
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const lock = await this.acquire();
      if (!lock) return;
      let lost = false;
      const onError = () => {
        lost = true;
        this.wake();
      };
      lock.on('error', onError);
      this.head = undefined;
      this.lastCheckpoint = undefined;
      try {
        while (!this.stopped && !lost) {
          try {
            await this.catchUp();
          } catch (error) {
            this.log.error('audit_chain_failed', { error: (error as Error).message });
          }
          await this.sleep(POLL_MS);
        }
      } finally {
        lock.off('error', onError);
        if (!lost) await lock.query('SELECT pg_advisory_unlock($1::bigint)', [LOCK_KEY]).catch(() => {});
        lock.release(lost);
      }
    }
  }

  private async acquire(): Promise<PoolClient | null> {
    while (!this.stopped) {
      try {
        const client = await this.pool.connect();
        const { rows } = await client.query('SELECT pg_try_advisory_lock($1::bigint) AS got', [LOCK_KEY]);
        if (rows[0].got) return client;
        client.release();
      } catch (error) {
        this.log.warn('audit_chain_lock_unavailable', { error: (error as Error).message });
      }
      await this.sleep(STANDBY_POLL_MS);
    }
    return null;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}
