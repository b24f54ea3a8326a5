// Machine-token administration (interactive admins only; a token never reaches these routes):
// create (the plaintext `registry_sk_...` shown once, in this answer), list, read, revoke.
// Tokens carry scopes from the spec's list (an unknown one is 422) and an expiry of 1 to 365
// days (default 90).

import { createRoute, z } from '@hono/zod-openapi';
import { SCOPES } from '../../../domain/registry/catalog.ts';
import { TOKEN_DAYS } from '../../../domain/registry/tokens/decider.ts';
import { listTokens, type TokenRow } from '../../../projections/registry/tokens.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { actorOf } from '../auth/principal.ts';
import { LIST_PAGE } from '../customers/routes.ts';
import { IdParam } from '../deployments/schemas.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, BODY_ERRORS, registryErrors, registryRouter } from '../router.ts';
import { createToken, existingToken, revokeToken } from './commands.ts';

const tags = ['machine tokens'];

export const CreateTokenBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    scopes: z
      .array(z.enum(SCOPES))
      .min(1)
      .max(SCOPES.length)
      .refine((s) => new Set(s).size === s.length, 'scopes must not repeat'),
    expires_in_days: z
      .number()
      .int()
      .min(TOKEN_DAYS.min)
      .max(TOKEN_DAYS.max)
      .optional()
      .openapi({
        description: `days until the token expires, ${TOKEN_DAYS.min}-${TOKEN_DAYS.max} (default ${TOKEN_DAYS.default})`,
      }),
  })
  .openapi('CreateTokenRequest');

export const Token = z
  .object({
    id: z.uuid(),
    name: z.string(),
    prefix: z.string().openapi({ description: 'the first characters of the token, to recognise it' }),
    scopes: z.array(z.enum(SCOPES)),
    status: z.enum(['active', 'revoked', 'expired']),
    created_by: z.string().nullable(),
    created_at: z.string(),
    expires_at: z.string(),
    revoked_at: z.string().nullable(),
    last_used_at: z.string().nullable(),
  })
  .openapi('MachineToken');
export const CreatedToken = Token.extend({
  token: z.string().openapi({ description: 'the token in plaintext: shown only this once' }),
}).openapi('CreatedMachineToken');
const TokenPage = z.object({ items: z.array(Token), ...pageFields }).openapi('MachineTokenPage');

function tokenView(row: TokenRow, now: Date) {
  const status = row.revoked_at
    ? ('revoked' as const)
    : Date.parse(row.expires_at) <= now.getTime()
      ? ('expired' as const)
      : ('active' as const);
  return {
    id: row.id,
    name: row.name,
    prefix: row.token_prefix,
    scopes: row.scopes,
    status,
    created_by: row.created_by,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
  };
}

export function tokenRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const admin = access(deps, 'admin');
  const ERRORS = { ...AUTH_ERRORS, 403: 'interactive admins only (tokens never), or a failed CSRF check' };

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/admin/tokens',
      tags,
      summary: 'Create a machine token; its plaintext is shown only in this answer',
      middleware: [admin] as const,
      request: { body: jsonBody(CreateTokenBody) },
      responses: {
        201: ok(CreatedToken, 'the token with its plaintext (Cache-Control: no-store)'),
        ...registryErrors({ ...ERRORS, ...BODY_ERRORS }),
      },
    }),
    async (c) => {
      const { row, token } = await createToken(deps, c.req.valid('json'), actorOf(c));
      c.header('Cache-Control', 'no-store');
      return c.json({ ...tokenView(row, deps.clock.now()), token }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/admin/tokens',
      tags,
      summary: 'List machine tokens (never their plaintext)',
      middleware: [admin] as const,
      request: { query: pageQuery(LIST_PAGE) },
      responses: { 200: ok(TokenPage, 'a page of tokens'), ...registryErrors(ERRORS) },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await listTokens(deps.db, q);
      const now = deps.clock.now();
      return c.json(
        page(
          'items',
          rows.map((r) => tokenView(r, now)),
          total,
          q,
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/admin/tokens/{id}',
      tags,
      summary: 'One machine token',
      middleware: [admin] as const,
      request: { params: IdParam },
      responses: { 200: ok(Token, 'the token'), ...registryErrors({ ...ERRORS, 404: 'token_not_found' }) },
    }),
    async (c) => c.json(tokenView(await existingToken(deps, c.req.valid('param').id), deps.clock.now()), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/v1/admin/tokens/{id}',
      tags,
      summary: 'Revoke a machine token (refused from the next request on)',
      middleware: [admin] as const,
      request: { params: IdParam },
      responses: {
        204: { description: 'revoked (again: nothing changes)' },
        ...registryErrors({ ...ERRORS, 404: 'token_not_found' }),
      },
    }),
    async (c) => {
      await revokeToken(deps, c.req.valid('param').id, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
