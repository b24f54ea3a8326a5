// A global position in the log: a pair of bigints ordered lexicographically.
//
// Why a pair: on EventStoreDB it is the `$all` (commit, prepare) position. On PostgreSQL it is
// (writer's transaction id, sequence number): readers deliver in that order and only below the
// oldest running transaction, so a transaction that commits late is never skipped (a single
// sequence number alone can be overtaken by a later-committing, lower number).

export interface Position {
  commit: bigint;
  prepare: bigint;
}

/**
 * Before every event. Adapters map it to their own "from the start" (PostgreSQL's transaction
 * ids and positions are positive; EventStoreDB reads from its START instead of after 0/0).
 */
export const START: Position = Object.freeze({ commit: 0n, prepare: 0n });

export function isStart(p: Position): boolean {
  return p.commit === 0n && p.prepare === 0n;
}

export function comparePositions(a: Position, b: Position): number {
  if (a.commit !== b.commit) return a.commit < b.commit ? -1 : 1;
  if (a.prepare !== b.prepare) return a.prepare < b.prepare ? -1 : 1;
  return 0;
}

export function isAfter(a: Position, b: Position): boolean {
  return comparePositions(a, b) > 0;
}

/** A string safe for JSON, logs and HTTP headers: `<commit>/<prepare>`. */
export function formatPosition(p: Position): string {
  return `${p.commit}/${p.prepare}`;
}

export function parsePosition(text: string): Position {
  const match = /^(-?\d+)\/(-?\d+)$/.exec(text.trim());
  if (!match) throw new Error(`not a log position: ${JSON.stringify(text)}`);
  return { commit: BigInt(match[1]!), prepare: BigInt(match[2]!) };
}
