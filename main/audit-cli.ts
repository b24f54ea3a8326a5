// The auditor's commands: `orchard replay` (the log as JSON lines, optionally up to an instant
// or a position) and `orchard audit public-key | export | verify`.
//
// Exit codes: 0 success (verify: the chain holds), 1 verification failed, 2 usage.

import { ChainVerifier, describeResult, verifyExportFile } from '../infra/audit/verify.ts';
import { auditItems, writeExport } from '../infra/audit/export.ts';
import { loadAuditSigningKey } from '../infra/audit/signing-key.ts';
import type { Config } from '../infra/config.ts';
import type { RecordedEvent } from '../infra/eventstore/port.ts';
import { comparePositions, formatPosition, parsePosition, type Position } from '../infra/eventstore/position.ts';
import type { Logger } from '../infra/logging.ts';
import { streamCategoryNamed } from '../domain/streams.ts';
import { openPlatform } from './platform.ts';

export const AUDIT_USAGE = `usage: orchard audit <command>
  audit public-key                  print the public key (hex) that signs the log's checkpoints
  audit export --out FILE [--from POS] [--stream-prefix P | --category C]
                                    write the log, its hash chain and signed checkpoints as JSON lines
                                    (--from: events strictly after position POS, as commit/prepare;
                                    --category: a stream category such as chat.message)
  audit verify FILE --public-key KEY
                                    verify an export offline (no database)
  audit verify [--public-key KEY]   verify the live log against its chain (default key: this server's)`;

interface Out {
  write(text: string): unknown;
}

/** Every value of `--name V`. */
export function option(args: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === name && args[i + 1] !== undefined) values.push(args[++i]!);
  return values;
}

/** Arguments that are neither options nor their values. */
function positionals(args: string[], withValues: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (withValues.includes(args[i]!)) i++;
    else out.push(args[i]!);
  }
  return out;
}

/**
 * `--category C` (repeatable): the stream prefixes of declared categories (`chat.message` selects
 * `chat.message-…`), or the error naming an unknown one.
 */
export function categoryPrefixes(names: string[]): { prefixes: string[] } | { error: string } {
  const prefixes: string[] = [];
  for (const name of names) {
    const declared = streamCategoryNamed(name);
    if (!declared)
      return {
        error: `unknown stream category ${JSON.stringify(name)}; the declared categories are listed in docs/reference/streams.md (from domain/<service>/streams.ts)`,
      };
    prefixes.push(declared.prefix);
  }
  return { prefixes };
}

/** `--until`: an RFC 3339 instant or a log position. */
export type Until = { kind: 'time'; at: Date } | { kind: 'position'; position: Position };

export function parseUntil(text: string): Until | null {
  if (/^-?\d+\/-?\d+$/.test(text.trim())) return { kind: 'position', position: parsePosition(text) };
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text.trim())) return null;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? null : { kind: 'time', at };
}

export function replayLine(e: RecordedEvent): string {
  return JSON.stringify({
    stream: e.stream,
    revision: e.revision.toString(),
    position: formatPosition(e.position),
    id: e.id,
    type: e.type,
    data: e.data,
    metadata: e.metadata,
    created_at: e.created_at.toISOString(),
  });
}

/** `orchard replay [--stream-prefix P | --category C]... [--type T]... [--until <RFC 3339 | position>]` */
export async function replayCommand(config: Config, log: Logger, args: string[], out: Out, err: Out): Promise<number> {
  const untilText = option(args, '--until')[0];
  const until = untilText === undefined ? null : parseUntil(untilText);
  if (untilText !== undefined && !until) {
    err.write(
      `orchard replay: --until takes an RFC 3339 instant (2025-01-31T12:00:00Z) or a log position (commit/prepare), got ${JSON.stringify(untilText)}\n`,
    );
    return 2;
  }
  const categories = categoryPrefixes(option(args, '--category'));
  if ('error' in categories) {
    err.write(`orchard replay: ${categories.error}\n`);
    return 2;
  }
  const platform = await openPlatform(config, log, { runProjections: false });
  try {
    const filter = {
      streamPrefixes: [...option(args, '--stream-prefix'), ...categories.prefixes],
      eventTypes: option(args, '--type'),
    };
    let after;
    for (;;) {
      const batch = await platform.store.readAll({ after, filter, limit: 500 });
      if (batch.length === 0) break;
      for (const e of batch) {
        // The log is in position order; its times are only nearly ordered (a transaction's time is
        // its start), so a time bound filters every event rather than stopping at the first later one.
        if (until?.kind === 'position' && comparePositions(e.position, until.position) > 0) return 0;
        if (until?.kind === 'time' && e.created_at.getTime() > until.at.getTime()) continue;
        out.write(replayLine(e) + '\n');
      }
      after = batch.at(-1)!.position;
    }
  } finally {
    await platform.close();
  }
  return 0;
}

export async function auditCommand(config: Config, log: Logger, args: string[], out: Out, err: Out): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'public-key': {
      const key = await loadAuditSigningKey(config);
      out.write(key.publicKeyHex + '\n');
      return 0;
    }
    case 'export': {
      const file = option(rest, '--out')[0];
      const fromText = option(rest, '--from')[0];
      const categories = categoryPrefixes(option(rest, '--category'));
      if ('error' in categories) {
        err.write(`orchard audit export: ${categories.error}\n`);
        return 2;
      }
      if (categories.prefixes.length > 1 || (categories.prefixes.length && option(rest, '--stream-prefix').length)) {
        err.write(`orchard audit export: one --stream-prefix or one --category\n`);
        return 2;
      }
      const prefix = option(rest, '--stream-prefix')[0] ?? categories.prefixes[0];
      let after: Position | undefined;
      try {
        after = fromText === undefined ? undefined : parsePosition(fromText);
      } catch {
        err.write(
          `orchard audit export: --from takes a log position (commit/prepare), got ${JSON.stringify(fromText)}\n`,
        );
        return 2;
      }
      if (!file) {
        err.write(AUDIT_USAGE + '\n');
        return 2;
      }
      const platform = await openPlatform(config, log, { runProjections: false });
      try {
        const items = auditItems(platform.store, platform.chain, {
          after,
          streamPrefix: prefix,
          publicKey: platform.auditKey.publicKeyHex,
          now: platform.clock.now(),
        });
        const written = await writeExport(items, file);
        err.write(
          `orchard audit export: ${written.events} events, ${written.checkpoints} checkpoints written to ${file}\n`,
        );
      } finally {
        await platform.close();
      }
      return 0;
    }
    case 'verify': {
      const [file, ...extra] = positionals(rest, ['--public-key']);
      const keyText = option(rest, '--public-key')[0]?.trim();
      if (extra.length > 0 || (file && !keyText)) {
        err.write(AUDIT_USAGE + '\n');
        return 2;
      }
      if (keyText && !/^[0-9a-f]{64}$/i.test(keyText)) {
        err.write('orchard audit verify: --public-key takes the 64 hex characters `orchard audit public-key` prints\n');
        return 2;
      }
      if (file) {
        const result = await verifyExportFile(file, keyText!.toLowerCase());
        out.write(describeResult(result) + '\n');
        return result.ok ? 0 : 1;
      }
      const platform = await openPlatform(config, log, { runProjections: false });
      try {
        const verifier = new ChainVerifier((keyText ?? platform.auditKey.publicKeyHex).toLowerCase());
        for await (const item of auditItems(platform.store, platform.chain, {
          publicKey: null,
          now: platform.clock.now(),
        })) {
          if (!verifier.push(item)) break;
        }
        const result = verifier.result();
        out.write(describeResult(result) + '\n');
        const head = await platform.chain.head();
        const pending = await platform.store.countAfter(head?.position ?? 'start', {}, 1_000_000);
        if (pending > 0)
          err.write(
            `orchard audit verify: ${pending === 1_000_000 ? 'at least ' : ''}${pending} newer events are not chained yet (a running server chains them)\n`,
          );
        return result.ok ? 0 : 1;
      } finally {
        await platform.close();
      }
    }
    default:
      err.write(AUDIT_USAGE + '\n');
      return 2;
  }
}
