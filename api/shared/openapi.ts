// OpenAPI plumbing shared by the three services: response helpers for `createRoute`, the
// document a service serves (generated from its routes), its reference page (Swagger UI, served
// from the swagger-ui-dist package on this server: no third-party script in an operator's
// browser), and the router walk that finds a route missing from the document.

import { createRoute, z, type OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { Env, MiddlewareHandler } from 'hono';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

type ZodSchema = z.ZodType;

export const jsonContent = <S extends ZodSchema>(schema: S) => ({ content: { 'application/json': { schema } } });

/**
 * `schema` or null. The generator renders `.nullable()` of a named component as the bare `$ref`
 * (and of an extended one as an `allOf` no null satisfies): the document would refuse the null
 * that is sent. A union keeps the null in the document.
 */
export const orNull = <S extends ZodSchema>(schema: S) => z.union([schema, z.null()]);

/** A JSON request body that must be present. */
export const jsonBody = <S extends ZodSchema>(schema: S) => ({ ...jsonContent(schema), required: true as const });

export const ok = <S extends ZodSchema>(schema: S, description: string) => ({ ...jsonContent(schema), description });

/** The error responses of a route, each in the service's error body schema. */
export function errorResponses(errorSchema: ZodSchema, statuses: Record<number, string>) {
  return Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [status, { ...jsonContent(errorSchema), description }]),
  );
}

export interface DocsOptions {
  title: string;
  version: string;
  description: string;
  /** `/api/v1/openapi.json` */
  documentPath: string;
  /** `/api/v1/docs` */
  pagePath: string;
  /** Who may read the document and the page (the specs allow no new anonymous routes). */
  guard: MiddlewareHandler;
  errorSchema: ZodSchema;
  tag?: string;
}

const require = createRequire(import.meta.url);
const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const asset = (file: string) => readFileSync(path.join(swaggerDir, file));

function documentOf(app: OpenAPIHono<any>, options: Pick<DocsOptions, 'title' | 'version' | 'description'>) {
  return app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
  });
}

const pageHtml = (title: string, pagePath: string, document: unknown) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <link rel="stylesheet" href="${pagePath}/swagger-ui.css">
</head>
<body>
  <div id="reference"></div>
  <script src="${pagePath}/swagger-ui-bundle.js"></script>
  <script>
    SwaggerUIBundle({ dom_id: '#reference', spec: ${JSON.stringify(document).replace(/</g, '\\u003c')}, deepLinking: true });
  </script>
</body>
</html>`;

/**
 * Serve the app's OpenAPI 3.1 document and its reference page. Call it after every route is
 * declared on `app` (the document is generated once, on first request, from what is declared).
 */
export function serveApiDocs(app: OpenAPIHono<any>, options: DocsOptions): void {
  const tags = [options.tag ?? 'api documentation'];
  const errors = errorResponses(options.errorSchema, { 401: 'not authenticated' });
  let cached: unknown;
  const document = () => (cached ??= documentOf(app, options));
  const files = { css: asset('swagger-ui.css'), js: asset('swagger-ui-bundle.js') };

  app.openapi(
    createRoute({
      method: 'get',
      path: options.documentPath,
      tags,
      middleware: [options.guard],
      summary: 'This OpenAPI 3.1 document',
      responses: { 200: ok(z.record(z.string(), z.unknown()), 'the OpenAPI document'), ...errors },
    }),
    (c) => c.json(document() as Record<string, unknown>, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: options.pagePath,
      tags,
      middleware: [options.guard],
      summary: 'API reference page',
      responses: {
        200: { content: { 'text/html': { schema: z.string() } }, description: 'the reference page' },
        ...errors,
      },
    }),
    (c) => {
      c.header('Cache-Control', 'no-store');
      return c.html(pageHtml(options.title, options.pagePath, document()), 200);
    },
  );

  for (const [file, type, body] of [
    ['swagger-ui.css', 'text/css', files.css],
    ['swagger-ui-bundle.js', 'text/javascript', files.js],
  ] as const) {
    app.openapi(
      createRoute({
        method: 'get',
        path: `${options.pagePath}/${file}`,
        tags,
        middleware: [options.guard],
        summary: `reference page asset ${file}`,
        responses: { 200: { content: { [type]: { schema: z.string() } }, description: file }, ...errors },
      }),
      (c) =>
        c.body(new Uint8Array(body), 200, {
          'Content-Type': `${type}; charset=utf-8`,
          'Cache-Control': 'private, max-age=3600',
        }),
    );
  }
}

/** The document as `npx orchard openapi` prints it: the same generator, no server. */
export function openApiDocument(
  app: OpenAPIHono<any>,
  options: Pick<DocsOptions, 'title' | 'version' | 'description'>,
) {
  return documentOf(app, options);
}

// A pattern in a path parameter, one level of braces deep (`{2,4}` quantifiers inside it).
const PATTERN = String.raw`\{((?:[^{}]|\{[^{}]*\})+)\}`;
const HONO_PARAM = new RegExp(String.raw`:([A-Za-z_]\w*)(?:${PATTERN})?`, 'g');
const TEMPLATE_PARAM = new RegExp(String.raw`\{([A-Za-z_]\w*)${PATTERN}\}`, 'g');

/**
 * The plain OpenAPI template of a route path: `{file}` for Hono's `:file{[0-9a-f-]+\.ics}` or a
 * declared `{file{[0-9a-f-]+\.ics}}` (the pattern stays in the code, and on the parameter).
 */
export function openApiTemplate(routePath: string): string {
  return routePath.replace(HONO_PARAM, '{$1}').replace(TEMPLATE_PARAM, '{$1}');
}

/** The patterns a declared path gives its parameters: `{file{[0-9a-f-]+\.ics}}` → file: `[0-9a-f-]+\.ics`. */
export function pathPatterns(routePath: string): Record<string, string> {
  return Object.fromEntries([...routePath.matchAll(TEMPLATE_PARAM)].map((m) => [m[1]!, m[2]!]));
}

/**
 * Routes the app answers that its document does not list (method and OpenAPI path). Middleware
 * registrations (method ALL) are not routes.
 */
export function undocumentedRoutes(app: OpenAPIHono<any>, generated: { paths?: object }): string[] {
  const document = generated as { paths?: Record<string, Record<string, unknown>> };
  const missing = new Set<string>();
  for (const { method, path: routePath } of app.routes) {
    if (method === 'ALL') continue;
    const openApiPath = openApiTemplate(routePath);
    if (!document.paths?.[openApiPath]?.[method.toLowerCase()]) missing.add(`${method} ${openApiPath}`);
  }
  return [...missing].sort();
}

export type { RouteConfig, Env };
