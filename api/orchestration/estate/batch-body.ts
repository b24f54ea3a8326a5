// Reading a batch body `{"documents": [ ... ]}` as a stream, one element at a time.
//
// An ingest batch may be hundreds of megabytes (500 documents of 500,000 characters). Parsing
// it whole would hold the raw bytes, the decoded text and the parsed objects at once. Instead
// this scanner walks the bytes as they arrive, tracking only strings and brackets, and hands
// over each element of the array (parsed with JSON.parse) as soon as it is complete: memory is
// bounded by one element, not by the batch.
//
// - The top level must be an object whose only key is the array's (other keys: 400
//   validation_failed, as a strict body). Malformed JSON anywhere is 400 invalid_json.
// - More than `maxElements` elements: 400 validation_failed as soon as the next one starts.
// - More than `maxBytes` bytes in all: 413 payload_too_large as soon as the limit is passed.
// - An element longer than `maxElementBytes` is not parsed: it is skipped (its first and last
//   bytes are kept to name its `path`) and reported as oversized, a failure of that element only.

import { ApiError } from '../../shared/http-errors.ts';

export type BatchElement = { index: number; value: unknown } | { index: number; oversized: true; path: string | null };

export interface BatchLimits {
  key: string;
  maxBytes: number;
  maxElements: number;
  maxElementBytes: number;
}

/** Bytes kept of an oversized element, at each end, to find its `path`. */
const HEAD_BYTES = 64 * 1024;
const TAIL_BYTES = 8 * 1024;

const enum S {
  Start,
  KeyOrEnd,
  Key,
  Colon,
  Value,
  ElementOrEnd,
  ElementAfterComma,
  Element,
  ElementEnd,
  AfterValue,
  KeyAfterComma,
  End,
}

const WS = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

const invalid = (message: string) => new ApiError(400, 'invalid_json', `malformed JSON body: ${message}`);

/** Where a value element ends, tracked across network chunks. */
class ElementScanner {
  depth = 0;
  inString = false;
  escaped = false;
  /** 'c' compound ({ or [), 's' string, 'l' literal (number, true, false, null). */
  kind: 'c' | 's' | 'l' = 'c';
  parts: Uint8Array[] = [];
  bytes = 0;
  oversized = false;
  /** The last bytes of an oversized element. */
  tail = new Uint8Array(0);

  start(first: number): void {
    this.kind = first === 0x7b || first === 0x5b ? 'c' : first === 0x22 ? 's' : 'l';
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.parts = [];
    this.bytes = 0;
    this.oversized = false;
    this.tail = new Uint8Array(0);
  }

  /**
   * Scan `chunk` from `from`: the index just past the element's last byte, or -1 when the
   * element goes on past this chunk. A literal ends before its delimiter (returned index).
   */
  scan(chunk: Uint8Array, from: number): number {
    let i = from;
    const n = chunk.length;
    if (this.kind === 'l') {
      while (i < n) {
        const b = chunk[i]!;
        if (b === 0x2c || b === 0x5d || b === 0x7d || WS(b)) return i;
        i++;
      }
      return -1;
    }
    for (; i < n; i++) {
      const b = chunk[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c) this.escaped = true;
        else if (b === 0x22) {
          this.inString = false;
          if (this.kind === 's') return i + 1;
        }
        continue;
      }
      if (b === 0x22) this.inString = true;
      else if (b === 0x7b || b === 0x5b) this.depth++;
      else if (b === 0x7d || b === 0x5d) {
        this.depth--;
        if (this.depth === 0) return i + 1;
        if (this.depth < 0) throw invalid('unbalanced brackets');
      }
    }
    return -1;
  }

  keep(bytes: Uint8Array, maxElementBytes: number): void {
    this.bytes += bytes.length;
    if (this.oversized) {
      this.tail = concat([this.tail, bytes]).slice(-TAIL_BYTES);
      return;
    }
    if (this.bytes > maxElementBytes) {
      // Keep only the head, enough to name the element's path in the failure.
      this.oversized = true;
      const head = concat(this.parts.concat(bytes), HEAD_BYTES);
      this.parts = [head];
      return;
    }
    this.parts.push(bytes);
  }
}

function concat(parts: Uint8Array[], max = Infinity): Uint8Array {
  const total = Math.min(
    max,
    parts.reduce((n, p) => n + p.length, 0),
  );
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    if (at >= total) break;
    const take = p.subarray(0, total - at);
    out.set(take, at);
    at += take.length;
  }
  return out;
}

const PATH_MEMBER = /"path"\s*:\s*"((?:[^"\\]|\\.)*)"/;

/** The `path` of an oversized element, when it is near either end of it. */
function pathOf(head: Uint8Array, tail: Uint8Array): string | null {
  const match = PATH_MEMBER.exec(new TextDecoder().decode(head)) ?? PATH_MEMBER.exec(new TextDecoder().decode(tail));
  if (!match) return null;
  try {
    return JSON.parse(`"${match[1]}"`) as string;
  } catch {
    return null;
  }
}

/**
 * A body that does not start as an object: 400 validation_failed when it is JSON after all (an
 * array, a string...), invalid_json when it is not JSON.
 */
async function notAnObject(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: Uint8Array,
  key: string,
): Promise<ApiError> {
  const parts = [first];
  let size = first.length;
  while (size <= HEAD_BYTES) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    size += value.length;
  }
  const shape = new ApiError(400, 'validation_failed', `the body must be a JSON object with "${key}"`);
  if (size > HEAD_BYTES) return shape;
  try {
    JSON.parse(new TextDecoder().decode(concat(parts)));
    return shape;
  } catch {
    return invalid('not JSON');
  }
}

/** The elements of `body[limits.key]`, in order, as they arrive. */
export async function* batchElements(
  body: ReadableStream<Uint8Array> | null,
  limits: BatchLimits,
): AsyncGenerator<BatchElement> {
  if (!body) throw new ApiError(400, 'validation_failed', `a JSON body with "${limits.key}" is required`);
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let state = S.Start;
  let total = 0;
  let keyParts: number[] = [];
  let keyEscaped = false;
  let seenArray = false;
  let index = 0;
  const element = new ElementScanner();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > limits.maxBytes) {
        throw new ApiError(
          413,
          'payload_too_large',
          `request body exceeds this route's limit of ${limits.maxBytes} bytes`,
          { limit_bytes: limits.maxBytes },
        );
      }
      const chunk = value;
      let i = 0;
      while (i < chunk.length) {
        const b = chunk[i]!;
        switch (state) {
          case S.Element: {
            const end = element.scan(chunk, i);
            if (end === -1) {
              element.keep(chunk.subarray(i), limits.maxElementBytes);
              i = chunk.length;
              continue;
            }
            element.keep(chunk.subarray(i, end), limits.maxElementBytes);
            i = end;
            state = S.ElementEnd;
            const at = index++;
            if (element.oversized) {
              yield { index: at, oversized: true, path: pathOf(element.parts[0]!, element.tail) };
            } else {
              let parsed: unknown;
              try {
                parsed = JSON.parse(decoder.decode(concat(element.parts)));
              } catch (error) {
                throw invalid(`${limits.key}[${at}]: ${(error as Error).message}`);
              }
              element.parts = [];
              yield { index: at, value: parsed };
            }
            continue;
          }
          case S.Key: {
            if (keyEscaped) keyEscaped = false;
            else if (b === 0x5c) keyEscaped = true;
            else if (b === 0x22) {
              let key: string;
              try {
                key = JSON.parse(`"${decoder.decode(new Uint8Array(keyParts))}"`) as string;
              } catch {
                throw invalid('bad object key');
              }
              if (key !== limits.key)
                throw new ApiError(400, 'validation_failed', `unrecognized field: ${key.slice(0, 100)}`);
              if (seenArray) throw new ApiError(400, 'validation_failed', `"${limits.key}" appears twice`);
              state = S.Colon;
              i++;
              continue;
            }
            if (keyParts.length > 1024) throw new ApiError(400, 'validation_failed', 'unrecognized field');
            keyParts.push(b);
            i++;
            continue;
          }
        }
        if (WS(b)) {
          i++;
          continue;
        }
        switch (state) {
          case S.Start:
            if (b !== 0x7b) throw await notAnObject(reader, chunk.subarray(i), limits.key);
            state = S.KeyOrEnd;
            break;
          case S.KeyOrEnd:
          case S.KeyAfterComma:
            if (b === 0x7d && state === S.KeyOrEnd) state = S.End;
            else if (b === 0x22) {
              state = S.Key;
              keyParts = [];
            } else throw invalid('expected a key');
            break;
          case S.Colon:
            if (b !== 0x3a) throw invalid('expected :');
            state = S.Value;
            break;
          case S.Value:
            if (b !== 0x5b) throw new ApiError(400, 'validation_failed', `${limits.key}: expected an array`);
            seenArray = true;
            state = S.ElementOrEnd;
            break;
          case S.ElementOrEnd:
          case S.ElementAfterComma:
            if (b === 0x5d) {
              if (state === S.ElementAfterComma) throw invalid('trailing comma');
              state = S.AfterValue;
              break;
            }
            if (index >= limits.maxElements) {
              throw new ApiError(400, 'validation_failed', `${limits.key}: at most ${limits.maxElements} per batch`);
            }
            element.start(b);
            state = S.Element;
            continue; // the element scanner reads this byte itself
          case S.ElementEnd:
            if (b === 0x2c) state = S.ElementAfterComma;
            else if (b === 0x5d) state = S.AfterValue;
            else throw invalid(`expected , or ] after ${limits.key}[${index - 1}]`);
            break;
          case S.AfterValue:
            if (b === 0x2c) state = S.KeyAfterComma;
            else if (b === 0x7d) state = S.End;
            else throw invalid('expected , or }');
            break;
          case S.End:
            throw invalid('unexpected data after the object');
        }
        i++;
      }
    }
    if (state !== S.End) throw invalid('unexpected end of body');
    if (!seenArray) throw new ApiError(400, 'validation_failed', `${limits.key}: required`);
    if (index === 0) throw new ApiError(400, 'validation_failed', `${limits.key}: at least one is required`);
  } finally {
    reader.releaseLock();
  }
}
