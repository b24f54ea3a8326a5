// Valid requests generated from an operation's request schemas with json-schema-faker, seeded:
// path parameters (a real resource where the world has one, else generated), query parameters
// (required ones always, optional ones by a coin toss), declared headers, and the body in its
// first declared media type. A request is kept as parts (already percent-encoded path and query
// values, a body value or raw text) so mutations can change one part and `url()` can build it.

import { generateSync } from 'json-schema-faker';
import { multipart, png, type Part } from '../../support/multipart.ts';
import type { Operation, Schema, ServiceDocument } from './documents.ts';
import type { Who } from './principals.ts';
import { mulberry32 } from '../../support/prng.ts';

export interface FuzzRequest {
  op: Operation;
  /** `valid`, or the mutation kind. */
  kind: string;
  /** What the mutation changed, for the failure report. */
  note: string;
  who: Who;
  /** Path parameter → percent-encoded value. */
  path: Record<string, string>;
  /** Percent-encoded query pairs, in order (repeats allowed). */
  query: Array<[string, string]>;
  headers: Record<string, string>;
  /** JSON or multipart body: the value (serialised at send time), or `raw` text/bytes as-is. */
  body?: { contentType: string | null; value?: unknown; raw?: string | Uint8Array };
}

/** The fuzzer's own choices, replayable from FUZZ_SEED. */
export const prng = mulberry32;

/**
 * Percent-encode a value; a lone surrogate (which has no UTF-8 form, so encodeURIComponent
 * throws) goes as the bytes a WTF-8 client would send (`%ED%A0%80`): invalid UTF-8 on the wire.
 */
export function encode(value: string): string {
  let out = '';
  for (const ch of value.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]|[\s\S]/g) ?? []) {
    const code = ch.charCodeAt(0);
    if (ch.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(ch);
  }
  return out;
}

const asText = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : typeof value === 'object' && value !== null
      ? JSON.stringify(value)
      : String(value);

export class RequestFactory {
  private readonly defs = new Map<string, ServiceDocument['defs']>();

  constructor(
    documents: ServiceDocument[],
    private readonly realResource: (op: Operation, name: string) => string | undefined,
  ) {
    for (const d of documents) this.defs.set(d.service, d.defs);
  }

  /**
   * A value of `schema` (with the service's definitions), seeded. Arrays and strings are capped
   * (8 items, 512 characters): a schema's own bounds may allow 100 × 256 × 4,096 characters, which
   * took the generator minutes per request and tested only the body limit; huge values are the
   * huge-string mutation's job.
   */
  fake(op: Operation, schema: Schema, seed: number): unknown {
    if (typeof schema === 'boolean') return 'x';
    return generateSync(
      { ...schema, $defs: this.defs.get(op.service) } as never,
      {
        seed,
        maxDepth: 4,
        maxDefaultItems: 2,
        maxItems: 8,
        maxLength: 512,
        optionalsProbability: 0.5,
        useExamplesValue: true,
        useDefaultValue: false,
      } as never,
    );
  }

  valid(op: Operation, seed: number, who: Who = 'right'): FuzzRequest {
    const random = prng(seed);
    const request: FuzzRequest = { op, kind: 'valid', note: '', who, path: {}, query: [], headers: {} };
    let n = 0;
    for (const p of op.parameters) {
      const generated = () => this.fake(op, p.schema, seed + ++n);
      if (p.in === 'path') {
        const real = this.realResource(op, p.name);
        request.path[p.name] = encode(real !== undefined && random() < 0.8 ? real : asText(generated()));
      } else if (p.in === 'query') {
        if (!p.required && random() < 0.5) continue;
        const value = generated();
        for (const v of Array.isArray(value) ? value : [value]) request.query.push([encode(p.name), encode(asText(v))]);
      } else if (p.in === 'header' && (p.required || random() < 0.5)) {
        request.headers[p.name] = asText(generated()).replace(/[^\x20-\x7e]/g, '');
      }
    }
    if (op.body && (op.body.required || random() < 0.8)) {
      const [type, schema] = Object.entries(op.body.content)[0]!;
      const value = this.fake(op, schema, seed + 1000);
      request.body = type === 'multipart/form-data' ? formBody(value, schema) : { contentType: type, value };
    }
    return request;
  }
}

/** A multipart body of a generated object: `format: binary` fields as a small PNG file part, the others as text fields. */
export function formBody(value: unknown, schema: Schema): NonNullable<FuzzRequest['body']> {
  const properties = (typeof schema === 'object' ? (schema.properties ?? {}) : {}) as Record<
    string,
    { format?: string }
  >;
  const parts: Part[] = Object.entries((value ?? {}) as Record<string, unknown>).map(([name, v]) =>
    properties[name]?.format === 'binary'
      ? { name, filename: 'fuzz.png', contentType: 'image/png', data: png(1) }
      : { name, data: asText(v) },
  );
  const { body, contentType } = multipart(parts);
  return { contentType, raw: body };
}

/** The request's URL path and query string. */
export function url(request: FuzzRequest): string {
  const path = request.op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => request.path[name] ?? 'x');
  const query = request.query
    .map(([k, v]) => (v === '' && k.startsWith('\u0000') ? k.slice(1) : `${k}=${v}`))
    .join('&');
  return query ? `${path}?${query}` : path;
}

/** Body text or bytes, and its content type header. */
export function serialise(request: FuzzRequest): { body?: string | Uint8Array; contentType?: string } {
  const b = request.body;
  if (!b) return {};
  const body = b.raw !== undefined ? b.raw : JSON.stringify(b.value);
  return b.contentType === null ? { body } : { body, contentType: b.contentType };
}
