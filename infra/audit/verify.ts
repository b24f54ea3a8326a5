// Verification of the chain: the same code for an export file (offline, no database) and for
// the live log (infra/audit/export.ts feeds it the log merged with its chain). It stops at the
// first failure and names its position.
//
// - Each event's hash must be SHA-256(previous hash ‖ its canonical JSON), the previous hash
//   being the header's (an export that starts after a position) or 32 zero bytes.
// - Positions strictly increase (a reordered log fails where the order breaks).
// - A checkpoint must name the position and hash of the chain entry just before it, and carry a
//   valid Ed25519 signature under the public key the auditor trusts (never one read from the file).
// - Live only: an event without a chain entry, or a chain entry whose event is gone, fails there.

import { createReadStream } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import {
  canonicalJson,
  chainHash,
  checkpointSignatureValid,
  GENESIS_HASH,
  publicKeyFromHex,
} from '../../crypto/audit.ts';
import { comparePositions, parsePosition, type Position } from '../eventstore/position.ts';
import { EXPORT_FORMAT, parseLine, type AuditItem } from './records.ts';

export type VerifyResult =
  | { ok: true; events: number; checkpoints: number; links: number }
  | { ok: false; position: string | null; reason: string; events: number; checkpoints: number };

export class ChainVerifier {
  private previous = GENESIS_HASH;
  private lastPosition: Position | null = null;
  private lastText: string | null = null;
  private events = 0;
  private links = 0;
  private checkpoints = 0;
  private started = false;
  failure: { position: string | null; reason: string } | null = null;
  private readonly publicKey: KeyObject;

  constructor(publicKeyHex: string) {
    this.publicKey = publicKeyFromHex(publicKeyHex);
  }

  /** Feed the next item; false once verification failed (stop feeding). */
  push(item: AuditItem): boolean {
    if (this.failure) return false;
    if (item.kind === 'header') {
      if (this.started) return this.fail(null, 'a header after the first line');
      if (item.format !== EXPORT_FORMAT) return this.fail(null, `unknown export format ${JSON.stringify(item.format)}`);
      if (!/^[0-9a-f]{64}$/.test(item.previous_hash))
        return this.fail(null, "the header's previous_hash is not a hash");
      this.previous = item.previous_hash;
      this.started = true;
      return true;
    }
    this.started = true;
    if (item.kind === 'checkpoint') return this.checkpoint(item);
    let position: Position;
    try {
      position = parsePosition(item.position);
    } catch {
      return this.fail(String(item.position), 'not a log position');
    }
    if (this.lastPosition && comparePositions(position, this.lastPosition) <= 0)
      return this.fail(item.position, `out of order (after ${this.lastText})`);
    this.lastPosition = position;
    this.lastText = item.position;
    switch (item.kind) {
      case 'missing':
        return this.fail(item.position, 'the chain has an entry here but the log holds no event');
      case 'link':
        if (!/^[0-9a-f]{64}$/.test(item.hash)) return this.fail(item.position, 'not a hash');
        this.previous = item.hash;
        this.links += 1;
        return true;
      case 'event': {
        if (item.hash === null) return this.fail(item.position, 'the log holds an event here that the chain does not');
        let computed = chainHash(this.previous, item.entryJson);
        if (computed !== item.hash) {
          // Another tool may have re-serialised the entry: hash its canonical form.
          try {
            computed = chainHash(this.previous, canonicalJson(JSON.parse(item.entryJson)));
          } catch {
            // not JSON: the mismatch stands
          }
          if (computed !== item.hash) return this.fail(item.position, 'the event does not match its chain hash');
        }
        this.previous = computed;
        this.events += 1;
        return true;
      }
    }
  }

  private checkpoint(item: Extract<AuditItem, { kind: 'checkpoint' }>): boolean {
    const position = String(item.position);
    if (this.lastText !== position || item.hash !== this.previous)
      return this.fail(position, 'the checkpoint does not match the chain at its position');
    if (!checkpointSignatureValid(this.publicKey, { position, hash: item.hash, at: item.at }, String(item.signature))) {
      return this.fail(position, "the checkpoint's signature is not valid under the given public key");
    }
    this.checkpoints += 1;
    return true;
  }

  private fail(position: string | null, reason: string): false {
    this.failure = { position, reason };
    return false;
  }

  result(): VerifyResult {
    return this.failure
      ? { ok: false, ...this.failure, events: this.events, checkpoints: this.checkpoints }
      : { ok: true, events: this.events, checkpoints: this.checkpoints, links: this.links };
  }
}

/** Verify an export file, reading it as a stream (memory stays flat for any size). */
export async function verifyExportFile(file: string, publicKeyHex: string): Promise<VerifyResult> {
  const verifier = new ChainVerifier(publicKeyHex);
  let rest = '';
  let lineNo = 0;
  const feed = (line: string): boolean => {
    lineNo += 1;
    if (line.length === 0) return true;
    let item: AuditItem;
    try {
      item = parseLine(line);
    } catch (error) {
      verifier.failure = {
        position: null,
        reason: `line ${lineNo} is not an export line: ${(error as Error).message}`,
      };
      return false;
    }
    return verifier.push(item);
  };
  const stream = createReadStream(file, { encoding: 'utf8', highWaterMark: 1 << 20 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      const text = rest + chunk;
      for (let end = text.indexOf('\n'); end !== -1; end = text.indexOf('\n', start)) {
        if (!feed(text.slice(start, end))) return verifier.result();
        start = end + 1;
      }
      rest = text.slice(start);
    }
    if (rest) feed(rest);
  } finally {
    stream.destroy();
  }
  return verifier.result();
}

/** The one-line verdict the CLI prints. */
export function describeResult(result: VerifyResult): string {
  if (result.ok) return `OK ${result.events} events, ${result.checkpoints} checkpoints`;
  return `FAILED at ${result.position ?? '(no position)'}: ${result.reason}`;
}
