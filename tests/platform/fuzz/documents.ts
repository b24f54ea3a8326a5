// The three services' OpenAPI 3.1 documents, as the fuzzer reads them: each generated from the
// app exactly as the service serves it, flattened into one list of operations with their
// parameters, request body and declared responses. Component references are rewritten to
// `$defs` of one schema per service, so that json-schema-faker (which resolves `#/$defs/...`
// inside the schema it is given) and ajv (which resolves `<service>#/$defs/...` against a schema
// added once) both read the same definitions.

import { createApp, SERVICES, type ServiceName } from '../../../main/apps.ts';
import type { Platform } from '../../../main/platform.ts';

export type Schema = Record<string, unknown> | boolean;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: Schema;
}

export interface Operation {
  service: ServiceName;
  method: string;
  /** The OpenAPI path template, `/api/channels/{id}/messages`. */
  path: string;
  /** `chat POST /api/channels/{id}/messages`: how findings and known failures name it. */
  key: string;
  parameters: Parameter[];
  /** Request body by media type (none: the operation takes no body). */
  body?: { required: boolean; content: Record<string, Schema> };
  /** Declared responses: status (`200`, `4XX`, `default`) → media type → schema (undefined: no body described). */
  responses: Record<string, Record<string, Schema | undefined>>;
}

export interface ServiceDocument {
  service: ServiceName;
  /** `$defs` of the document's component schemas (refs inside rewritten to `#/$defs/...`). */
  defs: Record<string, Schema>;
  operations: Operation[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Deep copy with `#/components/schemas/X` references pointed at `${prefix}#/$defs/X`. */
export function rewriteRefs<T>(value: T, prefix = ''): T {
  if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, prefix)) as T;
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] =
      k === '$ref' && typeof v === 'string'
        ? v.replace('#/components/schemas/', `${prefix}#/$defs/`)
        : rewriteRefs(v, prefix);
  }
  return out as T;
}

type RawOperation = {
  parameters?: Array<{ name: string; in: Parameter['in']; required?: boolean; schema?: Schema }>;
  requestBody?: { required?: boolean; content: Record<string, { schema?: Schema }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema }> }>;
};

export function readDocument(
  service: ServiceName,
  document: { paths?: Record<string, Record<string, RawOperation>>; components?: { schemas?: Record<string, Schema> } },
): ServiceDocument {
  const defs = rewriteRefs(document.components?.schemas ?? {});
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, raw] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const op = rewriteRefs(raw);
      const responses: Operation['responses'] = {};
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        responses[status] = Object.fromEntries(
          Object.entries(response.content ?? {}).map(([type, media]) => [type, media.schema]),
        );
      }
      operations.push({
        service,
        method: method.toUpperCase(),
        path,
        key: `${service} ${method.toUpperCase()} ${path}`,
        parameters: (op.parameters ?? []).map((p) => ({
          name: p.name,
          in: p.in,
          required: p.required === true || p.in === 'path',
          schema: p.schema ?? { type: 'string' },
        })),
        ...(op.requestBody
          ? {
              body: {
                required: op.requestBody.required === true,
                content: Object.fromEntries(
                  Object.entries(op.requestBody.content).map(([t, m]) => [t, m.schema ?? {}]),
                ),
              },
            }
          : {}),
        responses,
      });
    }
  }
  return { service, defs, operations };
}

/** The documents of the three services, generated from apps built on this platform. */
export function loadDocuments(platform: Platform): ServiceDocument[] {
  return SERVICES.map((service) => {
    const app = createApp(service, platform);
    return readDocument(
      service,
      app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: service, version: '0' } }) as never,
    );
  });
}
