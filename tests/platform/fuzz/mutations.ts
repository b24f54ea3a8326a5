// The mutation kinds: each turns a valid request into one or more invalid ones. A kind aims at
// the request's JSON body when it has one, else at its query, else at its path, else at an
// added query parameter, so every kind reaches every operation.

import type { Schema } from './documents.ts';
import { encode, type FuzzRequest } from './requests.ts';

type Random = () => number;
type Mutation = (request: FuzzRequest, random: Random, defs: Record<string, Schema>) => FuzzRequest[];

const HUGE_BODY = 300_000;
const HUGE_URL = 4_000;
const DEPTH = 5_000;

const clone = (r: FuzzRequest, kind: string, note: string, change: Partial<FuzzRequest> = {}): FuzzRequest => ({
  ...r,
  kind,
  note,
  path: { ...r.path },
  query: [...r.query],
  headers: { ...r.headers },
  ...(r.body ? { body: { ...r.body } } : {}),
  ...change,
});

const pick = <T>(items: T[], random: Random): T | undefined =>
  items.length ? items[Math.floor(random() * items.length)] : undefined;

/** Leaf paths of a JSON value (object keys and array indexes), with the leaf's type. */
function leaves(
  value: unknown,
  at: Array<string | number> = [],
  out: Array<{ at: Array<string | number>; type: string }> = [],
) {
  if (Array.isArray(value)) value.forEach((v, i) => leaves(v, [...at, i], out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) leaves(v, [...at, k], out);
  else if (at.length) out.push({ at, type: value === null ? 'null' : typeof value });
  return out;
}

function setAt(value: unknown, at: Array<string | number>, leaf: unknown): unknown {
  if (at.length === 0) return leaf;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as object) }) as Record<string | number, unknown>;
  copy[at[0]!] = setAt(copy[at[0]!], at.slice(1), leaf);
  return copy;
}

const jsonBody = (r: FuzzRequest) => r.body && r.body.raw === undefined && /json/.test(r.body.contentType ?? '');
const hasJsonOp = (r: FuzzRequest) => Object.keys(r.op.body?.content ?? {}).some((t) => /json/.test(t));

/**
 * Put `leaf` (a JSON value) or `text` (a string for the URL) at one place of the request: a body
 * leaf of the preferred type, else any body leaf, else a query parameter, else a path parameter,
 * else a new query parameter.
 */
function plant(
  r: FuzzRequest,
  kind: string,
  random: Random,
  leaf: unknown,
  text: string,
  prefer?: string,
): FuzzRequest {
  if (jsonBody(r)) {
    const all = leaves(r.body!.value);
    const spot =
      pick(
        all.filter((l) => l.type === prefer),
        random,
      ) ?? pick(all, random);
    if (spot)
      return clone(r, kind, `body ${spot.at.join('.')}`, {
        body: { ...r.body!, value: setAt(r.body!.value, spot.at, leaf) },
      });
    if (r.body!.value !== null && typeof r.body!.value === 'object' && !Array.isArray(r.body!.value)) {
      return clone(r, kind, 'body field fuzz', {
        body: { ...r.body!, value: { ...(r.body!.value as object), fuzz: leaf } },
      });
    }
  }
  const queryParams = r.op.parameters.filter((p) => p.in === 'query');
  const query = pick(queryParams, random);
  if (query) {
    const next = clone(r, kind, `query ${query.name}`);
    next.query = [...next.query.filter(([k]) => k !== encode(query.name)), [encode(query.name), encode(text)]];
    return next;
  }
  const pathParam = pick(Object.keys(r.path), random);
  if (pathParam) return clone(r, kind, `path ${pathParam}`, { path: { ...r.path, [pathParam]: encode(text) } });
  return clone(r, kind, 'query fuzz', { query: [...r.query, ['fuzz', encode(text)]] });
}

const nested = (open: string, close: string, inner = '1') => open.repeat(DEPTH) + inner + close.repeat(DEPTH);

export const MUTATIONS: Record<string, Mutation> = {
  'wrong-type': (r, random) => {
    if (jsonBody(r)) {
      const spot = pick(leaves(r.body!.value), random);
      if (!spot) return [clone(r, 'wrong-type', 'body as a string', { body: { ...r.body!, value: 'not an object' } })];
      const other =
        spot.type === 'string'
          ? 12345
          : spot.type === 'number'
            ? 'twelve'
            : spot.type === 'boolean'
              ? 'yes'
              : { unexpected: [] };
      return [
        clone(r, 'wrong-type', `body ${spot.at.join('.')}`, {
          body: { ...r.body!, value: setAt(r.body!.value, spot.at, other) },
        }),
        clone(r, 'wrong-type', 'body as an array', { body: { ...r.body!, value: [r.body!.value] } }),
      ];
    }
    return [
      plant(r, 'wrong-type', random, { a: 1 }, 'not-a-number-{[]}', 'number'),
      plant(r, 'wrong-type', random, [], 'true,false'),
    ];
  },
  'missing-required': (r, random, defs) => {
    if (jsonBody(r) && r.body!.value !== null && typeof r.body!.value === 'object' && !Array.isArray(r.body!.value)) {
      const schema = resolve(r.op.body!.content[r.body!.contentType!.split(';')[0]!] ?? {}, defs);
      const required = (
        typeof schema === 'object' && Array.isArray(schema.required) ? schema.required : []
      ) as string[];
      const victim = pick(required, random) ?? pick(Object.keys(r.body!.value as object), random);
      const out = [
        clone(r, 'missing-required', 'no body', { body: undefined }),
        clone(r, 'missing-required', 'empty body with a JSON type', {
          body: { contentType: 'application/json', raw: '' },
        }),
      ];
      if (victim) {
        const value = { ...(r.body!.value as Record<string, unknown>) };
        delete value[victim];
        out.push(clone(r, 'missing-required', `body without ${victim}`, { body: { ...r.body!, value } }));
      }
      return out;
    }
    const required = r.op.parameters.find((p) => p.in === 'query' && p.required);
    if (required)
      return [
        clone(r, 'missing-required', `no query ${required.name}`, {
          query: r.query.filter(([k]) => k !== encode(required.name)),
        }),
      ];
    if (r.body) return [clone(r, 'missing-required', 'no body', { body: undefined })];
    return [clone(r, 'missing-required', 'no query, no headers', { query: [], headers: {} })];
  },
  'huge-string': (r, random) => [
    plant(r, 'huge-string', random, 'x'.repeat(HUGE_BODY), 'x'.repeat(HUGE_URL), 'string'),
    ...(Object.keys(r.path).length
      ? [
          clone(r, 'huge-string', 'every path parameter', {
            path: Object.fromEntries(Object.keys(r.path).map((k) => [k, 'y'.repeat(HUGE_URL)])),
          }),
        ]
      : []),
  ],
  nul: (r, random) => [
    plant(r, 'nul', random, 'a\u0000b', 'a\u0000b', 'string'),
    ...(Object.keys(r.path).length
      ? [
          clone(r, 'nul', 'every path parameter', {
            path: Object.fromEntries(Object.keys(r.path).map((k) => [k, `${r.path[k]}%00`])),
          }),
        ]
      : []),
    ...(r.query.length
      ? [clone(r, 'nul', 'every query value', { query: r.query.map(([k, v]) => [k, `${v}%00`]) })]
      : []),
  ],
  'lone-surrogate': (r, random) => [
    plant(r, 'lone-surrogate', random, '\uD800x\uDFFF', '\uD800x', 'string'),
    ...(Object.keys(r.path).length
      ? [
          clone(r, 'lone-surrogate', 'every path parameter', {
            path: Object.fromEntries(Object.keys(r.path).map((k) => [k, `${r.path[k]}${encode('\uDC00')}`])),
          }),
        ]
      : []),
  ],
  'negative-number': (r, random) => [
    plant(r, 'negative-number', random, -1, '-1', 'number'),
    plant(r, 'negative-number', random, -2147483649, '-2147483649', 'number'),
  ],
  'overflow-number': (r, random) => [
    plant(r, 'overflow-number', random, 1e308, '99999999999999999999999999', 'number'),
    plant(r, 'overflow-number', random, 2 ** 64, '18446744073709551616', 'number'),
    plant(r, 'overflow-number', random, 0.5, 'NaN', 'number'),
  ],
  'deep-nesting': (r) => {
    const deep = nested('[', ']');
    if (hasJsonOp(r) || (r.op.method !== 'GET' && r.op.method !== 'HEAD')) {
      return [
        clone(r, 'deep-nesting', `${DEPTH}-level arrays as the body`, {
          body: { contentType: 'application/json', raw: deep },
        }),
        clone(r, 'deep-nesting', `${DEPTH}-level objects in a field`, {
          body: { contentType: 'application/json', raw: `{"fuzz":${nested('{"a":', '}')}}` },
        }),
      ];
    }
    return [
      clone(r, 'deep-nesting', `${DEPTH}-level brackets in the query`, {
        query: [...r.query, ['fuzz', encode(deep)], [encode('a' + '[a]'.repeat(200)), '1']],
      }),
    ];
  },
  'unknown-query': (r) => [
    clone(r, 'unknown-query', 'unknown parameters', {
      query: [...r.query, ['zz_fuzz', '1'], ['__proto__', 'x'], ['constructor', 'prototype'], ['%00', '%00']],
    }),
  ],
  'repeated-query': (r) => {
    const declared = r.op.parameters.filter((p) => p.in === 'query');
    if (declared.length === 0)
      return [
        clone(r, 'repeated-query', 'an unknown parameter twice', { query: [...r.query, ['fuzz', 'a'], ['fuzz', 'b']] }),
      ];
    return [
      clone(r, 'repeated-query', 'every query parameter twice', {
        query: declared.flatMap((p) => {
          const present = r.query.find(([k]) => k === encode(p.name))?.[1] ?? 'a';
          return [
            [encode(p.name), present],
            [encode(p.name), present === '1' ? '2' : '1'],
          ] as Array<[string, string]>;
        }),
      }),
    ];
  },
  'wrong-content-type': (r) => {
    const text = r.body ? (r.body.raw ?? JSON.stringify(r.body.value)) : '{"fuzz":1}';
    const types =
      hasJsonOp(r) || r.op.method !== 'GET'
        ? [
            'text/plain',
            'application/xml',
            'application/x-www-form-urlencoded',
            'multipart/form-data; boundary=fuzz',
            ...(hasJsonOp(r) ? [] : ['application/json']),
          ]
        : ['text/plain'];
    return types
      .map((t) =>
        clone(r, 'wrong-content-type', t, {
          body: r.op.method === 'GET' || r.op.method === 'HEAD' ? undefined : { contentType: t, raw: text },
          headers: { ...r.headers, 'content-type': t },
        }),
      )
      .concat(
        r.body
          ? [
              clone(r, 'wrong-content-type', 'no content type', {
                body: { contentType: null, raw: typeof text === 'string' ? text : '' },
              }),
            ]
          : [],
      );
  },
  'malformed-json': (r) =>
    r.op.method === 'GET'
      ? [clone(r, 'malformed-json', 'a JSON-looking query value', { query: [...r.query, ['fuzz', encode('{"a":')]] })]
      : [
          clone(r, 'malformed-json', 'truncated JSON', {
            body: { contentType: 'application/json', raw: '{"a": [1, ' },
          }),
          clone(r, 'malformed-json', 'bytes that are not UTF-8', {
            body: {
              contentType: 'application/json',
              raw: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
            },
          }),
        ],
  'no-credentials': (r) => [clone(r, 'no-credentials', 'no credentials', { who: 'none' })],
  'lesser-principal': (r) => [clone(r, 'lesser-principal', 'a lesser principal', { who: 'lesser' })],
};

export const KINDS = Object.keys(MUTATIONS);

/** A body schema with its top-level `$ref` followed. */
function resolve(schema: Schema, defs: Record<string, Schema>): Schema {
  for (let i = 0; i < 5 && typeof schema === 'object' && typeof schema.$ref === 'string'; i++)
    schema = defs[(schema.$ref as string).replace('#/$defs/', '')] ?? {};
  return schema;
}
