// Checking an answer against the document: its status must be declared for the operation, its
// media type among the declared ones, and a JSON body must validate (ajv, JSON Schema 2020-12,
// the dialect of OpenAPI 3.1) against the declared schema. A 5xx is a finding unless it is a
// declared 502/503 whose body matches (an upstream that is absent in-process, a maintenance window).

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { Operation, Schema, ServiceDocument } from './documents.ts';

// ajv-formats is CommonJS: its default export arrives wrapped under `default` in ESM.
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as unknown as FormatsPlugin;

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

export class ResponseChecker {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(documents: ServiceDocument[]) {
    addFormats(this.ajv);
    // OpenAPI's `binary` strings (file bodies) and zod's ids are not JSON Schema formats to check.
    for (const f of [
      'binary',
      'int32',
      'int64',
      'float',
      'double',
      'cuid',
      'cuid2',
      'ulid',
      'nanoid',
      'emoji',
      'base64url',
      'jwt',
      'cidrv4',
      'cidrv6',
      'e164',
    ])
      this.ajv.addFormat(f, true);
    for (const d of documents) {
      this.ajv.addSchema({ $id: `https://fuzz.test/${d.service}`, $defs: rewriteForAjv(d.defs, d.service) } as object);
    }
  }

  /** Every problem with this answer, as readable lines (empty: documented). */
  check(op: Operation, answer: Answer): string[] {
    const declared =
      op.responses[String(answer.status)] ?? op.responses[`${String(answer.status)[0]}XX`] ?? op.responses.default;
    if (!declared) {
      return [`status ${answer.status} is not declared (declared: ${Object.keys(op.responses).join(', ')})`];
    }
    const problems: string[] = [];
    if (answer.status >= 500 && answer.status !== 502 && answer.status !== 503) problems.push(`a ${answer.status}`);
    const types = Object.keys(declared);
    if (types.length === 0 || answer.status === 304 || answer.status === 204 || answer.status === 101) return problems;
    const media = answer.contentType.split(';')[0]!.trim().toLowerCase();
    const match = types.find((t) => mediaMatches(t, media));
    if (!match) {
      problems.push(
        `content type "${media || '(none)'}" is not declared for ${answer.status} (declared: ${types.join(', ')})`,
      );
      return problems;
    }
    const schema = declared[match];
    if (schema === undefined || !/json/.test(match)) return problems;
    let body: unknown;
    try {
      body = JSON.parse(answer.text);
    } catch {
      problems.push(`declared JSON, but the body does not parse: ${answer.text.slice(0, 200)}`);
      return problems;
    }
    const validate = this.validator(op, String(answer.status), match, schema);
    if (!validate(body)) {
      const errors = (validate.errors ?? [])
        .slice(0, 3)
        .map((e) => `${e.instancePath || '/'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`);
      problems.push(`body does not match the ${answer.status} schema: ${errors.join('; ')}`);
    }
    return problems;
  }

  private validator(op: Operation, status: string, media: string, schema: Schema): ValidateFunction {
    const key = `${op.key} ${status} ${media}`;
    let validate = this.compiled.get(key);
    if (!validate) {
      validate = this.ajv.compile(rewriteForAjv({ schema }, op.service).schema as object);
      this.compiled.set(key, validate);
    }
    return validate;
  }
}

/** `#/$defs/X` (the form of documents.ts) → `https://fuzz.test/<service>#/$defs/X`, the schema added once per service. */
function rewriteForAjv<T>(value: T, service: string): T {
  if (Array.isArray(value)) return value.map((v) => rewriteForAjv(v, service)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')
        ? `https://fuzz.test/${service}${v}`
        : rewriteForAjv(v, service);
  }
  return out as T;
}

/** `image/*` matches `image/png`; `*\/*` matches anything. */
function mediaMatches(declared: string, actual: string): boolean {
  const [dt, ds] = declared.toLowerCase().split('/');
  const [at, as] = actual.split('/');
  return (dt === '*' || dt === at) && (ds === '*' || ds === as);
}
