// Where the hash chain and its signed checkpoints live: two append-only PostgreSQL tables beside
// the log (migration 011). The same tables serve both log adapters: with EventStoreDB the events
// are there and their chain is here, beside the projections' checkpoints.

import type { Pool, PoolClient } from '../db/pool.ts';
import type { Position } from '../eventstore/position.ts';

export interface ChainLink {
  /** 1, 2, 3, ...: the event's place in the chain. */
  seq: bigint;
  position: Position;
  /** Hex. */
  hash: string;
}

export interface StoredCheckpoint {
  seq: bigint;
  position: Position;
  hash: string;
  at: Date;
  publicKey: string;
  /** Hex. */
  signature: string;
}

interface LinkRow {
  seq: string;
  c: string;
  p: string;
  hash: string;
}
interface CheckpointRow extends LinkRow {
  at: Date;
  public_key: string;
  signature: string;
}

const toLink = (r: LinkRow): ChainLink => ({
  seq: BigInt(r.seq),
  position: { commit: BigInt(r.c), prepare: BigInt(r.p) },
  hash: r.hash,
});
const toCheckpoint = (r: CheckpointRow): StoredCheckpoint => ({
  ...toLink(r),
  at: r.at,
  publicKey: r.public_key,
  signature: r.signature,
});

// ORDER BY names columns as `table.x`: a bare name would match the ::text output alias first.
const LINK_COLUMNS = `seq::text AS seq, commit_pos::text AS c, prepare_pos::text AS p, encode(hash, 'hex') AS hash`;
const CHECKPOINT_COLUMNS = `${LINK_COLUMNS}, at, public_key, encode(signature, 'hex') AS signature`;

export class ChainStore {
  constructor(private readonly db: Pool) {}

  async head(): Promise<ChainLink | null> {
    const { rows } = await this.db.query<LinkRow>(
      `SELECT ${LINK_COLUMNS} FROM event_chain ORDER BY event_chain.seq DESC LIMIT 1`,
    );
    return rows[0] ? toLink(rows[0]) : null;
  }

  async lastCheckpoint(): Promise<StoredCheckpoint | null> {
    const { rows } = await this.db.query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints ORDER BY audit_checkpoints.seq DESC LIMIT 1`,
    );
    return rows[0] ? toCheckpoint(rows[0]) : null;
  }

  /** Links after `afterSeq`, in chain order. */
  async links(afterSeq: bigint, limit: number): Promise<ChainLink[]> {
    const { rows } = await this.db.query<LinkRow>(
      `SELECT ${LINK_COLUMNS} FROM event_chain WHERE event_chain.seq > $1::bigint ORDER BY event_chain.seq LIMIT $2`,
      [afterSeq.toString(), limit],
    );
    return rows.map(toLink);
  }

  /** The last link at or before `position` (an export from there starts after it), or null. */
  async linkAtOrBefore(position: Position): Promise<ChainLink | null> {
    const { rows } = await this.db.query<LinkRow>(
      `SELECT ${LINK_COLUMNS} FROM event_chain WHERE (commit_pos, prepare_pos) <= ($1::bigint, $2::bigint)
       ORDER BY event_chain.commit_pos DESC, event_chain.prepare_pos DESC LIMIT 1`,
      [position.commit.toString(), position.prepare.toString()],
    );
    return rows[0] ? toLink(rows[0]) : null;
  }

  /** Checkpoints after `afterSeq`, in chain order. */
  async checkpoints(afterSeq: bigint, limit: number): Promise<StoredCheckpoint[]> {
    const { rows } = await this.db.query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM audit_checkpoints WHERE audit_checkpoints.seq > $1::bigint ORDER BY audit_checkpoints.seq LIMIT $2`,
      [afterSeq.toString(), limit],
    );
    return rows.map(toCheckpoint);
  }

  /**
   * Append links and checkpoints in one transaction. The primary key on `seq` and the unique
   * position make a second writer fail instead of forking the chain.
   */
  async write(links: ChainLink[], checkpoints: StoredCheckpoint[]): Promise<void> {
    if (links.length === 0 && checkpoints.length === 0) return;
    const client = await this.db.connect();
    try {
      await client.query('BEGIN');
      await insertLinks(client, links);
      for (const cp of checkpoints) {
        await client.query(
          `INSERT INTO audit_checkpoints (seq, commit_pos, prepare_pos, hash, at, public_key, signature)
           VALUES ($1, $2, $3, decode($4, 'hex'), $5, $6, decode($7, 'hex'))`,
          [
            cp.seq.toString(),
            cp.position.commit.toString(),
            cp.position.prepare.toString(),
            cp.hash,
            cp.at,
            cp.publicKey,
            cp.signature,
          ],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
}

async function insertLinks(client: PoolClient, links: ChainLink[]): Promise<void> {
  if (links.length === 0) return;
  await client.query(
    `INSERT INTO event_chain (seq, commit_pos, prepare_pos, hash)
     SELECT s, c, p, decode(h, 'hex') FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[]) AS l(s, c, p, h)`,
    [
      links.map((l) => l.seq.toString()),
      links.map((l) => l.position.commit.toString()),
      links.map((l) => l.position.prepare.toString()),
      links.map((l) => l.hash),
    ],
  );
}
