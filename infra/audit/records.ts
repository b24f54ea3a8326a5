// The audit export's JSON lines, and the items the verifier reads (from a file or from the live
// log). One line each:
//
//   {"kind":"header","format":"orchard-audit-export/1","after":null|"c/p","previous_hash":"<hex>","stream_prefix":null|"P","public_key":"<hex>","exported_at":"..."}
//   {"kind":"event","position":"c/p","hash":"<hex>","entry":{created_at,data,metadata,revision,stream,type}}
//   {"kind":"link","position":"c/p","hash":"<hex>"}            an event outside --stream-prefix: its hash only
//   {"kind":"missing","position":"c/p","hash":"<hex>"}         a chain entry whose event the log lost (a tampered log)
//   {"kind":"checkpoint","position":"c/p","hash":"<hex>","at":"...","public_key":"<hex>","signature":"<hex>"}
//
// An event line's `entry` is written in its canonical form, the exact bytes the chain hashed, so
// a verifier hashes it as it stands; one re-serialised by another tool is canonicalised first.

import { canonicalJson } from '../../crypto/audit.ts';

export const EXPORT_FORMAT = 'orchard-audit-export/1';

export interface HeaderItem {
  kind: 'header';
  format: string;
  after: string | null;
  previous_hash: string;
  stream_prefix: string | null;
  public_key: string | null;
  exported_at: string;
}

/** An event and its chain hash; `hash` null: the log holds the event but the chain has no entry for it. */
export interface EventItem {
  kind: 'event';
  position: string;
  hash: string | null;
  /** The entry's JSON: canonical as written (a verifier canonicalises it again on a mismatch). */
  entryJson: string;
}

/** A chain entry whose event is not in the export (outside its filter). */
export interface LinkItem {
  kind: 'link';
  position: string;
  hash: string;
}

/** A chain entry whose event the log no longer holds (live verification only). */
export interface MissingItem {
  kind: 'missing';
  position: string;
  hash: string;
}

export interface CheckpointItem {
  kind: 'checkpoint';
  position: string;
  hash: string;
  at: string;
  public_key: string;
  signature: string;
}

export type AuditItem = HeaderItem | EventItem | LinkItem | MissingItem | CheckpointItem;

export function eventLine(position: string, hash: string, entryJson: string): string {
  return `{"kind":"event","position":${JSON.stringify(position)},"hash":"${hash}","entry":${entryJson}}`;
}

export function itemLine(item: HeaderItem | LinkItem | MissingItem | CheckpointItem): string {
  return JSON.stringify(item);
}

// The fast path: an event line exactly as eventLine writes it.
const EVENT_PREFIX = /^\{"kind":"event","position":"(-?\d+\/-?\d+)","hash":"([0-9a-f]{64})","entry":/;

/** One line of an export; throws on a line that is not one. */
export function parseLine(line: string): AuditItem {
  const fast = EVENT_PREFIX.exec(line);
  if (fast && line.endsWith('}')) {
    return { kind: 'event', position: fast[1]!, hash: fast[2]!, entryJson: line.slice(fast[0].length, -1) };
  }
  const value = JSON.parse(line) as Record<string, unknown>;
  switch (value.kind) {
    case 'event': {
      return {
        kind: 'event',
        position: String(value.position),
        hash: typeof value.hash === 'string' ? value.hash : null,
        entryJson: canonicalJson(value.entry),
      };
    }
    case 'header':
    case 'link':
    case 'missing':
    case 'checkpoint':
      return value as unknown as AuditItem;
    default:
      throw new Error(`not an audit export line (kind ${JSON.stringify(value.kind)})`);
  }
}
