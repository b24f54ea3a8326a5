// Machine-token administration (interactive admins only; a token never reaches these routes):
// create (the plaintext `registry_sk_...` shown once, in this answer), list, read, revoke.
// Tokens carry scopes from the spec's list (an unknown one is 422) and an expiry of 1 to 365
// days (default 90).

import { randomUUID } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import { SCOPES } from '../../../domain/registry/catalog.ts';
import { TOKEN_DAYS, TOKEN_PREFIX, tokenDecider } from '../../../domain/registry/tokens/decider.ts';
import { tokenStream } from '../../../domain/registry/tokens/events.ts';
import { listTokens, tokenById, type TokenRow } from '../../../projections/registry/tokens.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { actorOf } from '../auth/principal.ts';
import { LIST_PAGE } from '../customers/routes.ts';
import { IdParam } from '../deployments/schemas.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, BODY_ERRORS, registryErrors, registryRouter } from '../router.ts';

const tags = ['machine tokens'];
/** Characters of the token shown in lists to tell tokens apart (the prefix and 6 random characters). */
const DISPLAY_CHARS = TOKEN_PREFIX.length + 6;

export const CreateTokenBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length).refine((s) => new Set(s).size === s.length, 'scopes must not repeat'),
  expires_in_days: z.number().int().min(TOKEN_DAYS.min).max(TOKEN_DAYS.max).optional()
    .openapi({ description: `days until the token expires, ${TOKEN_DAYS.min}-${TOKEN_DAYS.max} (default ${TOKEN_DAYS.default})` }),
}).openapi('CreateTokenRequest');

export const Token = z.object({
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
}).openapi('MachineToken');
export const CreatedToken = Token.extend({ token: z.string().openapi({ description: 'the token in plaintext: shown only this once' }) }).openapi('CreatedMachineToken');
const TokenPage = z.object({ items: z.array(Token), ...pageFields }).openapi('MachineTokenPage');

function tokenView(row: TokenRow, now: Date) {
  const status = row.revoked_at ? 'revoked' as const : Date.parse(row.expires_at) <= now.getTime() ? 'expired' as const : 'active' as const;
  return {
    id: row.id, name: row.name, prefix: row.token_prefix, scopes: row.scopes, status, created_by: row.created_by,
    created_at: row.created_at, expires_at: row.expires_at, revoked_at: row.revoked_at, last_used_at: row.last_used_at,
  };
}

export function tokenRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const admin = access(deps, 'admin');
  const ERRORS = { ...AUTH_ERRORS, 403: 'interactive admins only (tokens never), or a failed CSRF check' };

  async function existing(id: string): Promise<TokenRow> {
    const row = z.uuid().safeParse(id).success ? await tokenById(deps.db, id) : null;
    if (!row) throw new ApiError(404, 'token_not_found', 'no such token');
    return row;
  }

  app.openapi(createRoute({
    method: 'post', path: '/api/v1/admin/tokens', tags, summary: 'Create a machine token; its plaintext is shown only in this answer', middleware: [admin] as const,
    request: { body: jsonBody(CreateTokenBody) },
    responses: { 201: ok(CreatedToken, 'the token with its plaintext (Cache-Control: no-store)'), ...registryErrors({ ...ERRORS, ...BODY_ERRORS }) },
  }), async (c) => {
    const body = c.req.valid('json');
    const id = randomUUID();
    const token = generateToken(TOKEN_PREFIX);
    const context = actorOf(c);
    await deps.commands.run(tokenStream(id), tokenDecider, {
      type: 'CreateToken', token_id: id, name: body.name, token_hash: hashToken(token), token_prefix: token.slice(0, DISPLAY_CHARS),
      scopes: body.scopes, days: body.expires_in_days ?? TOKEN_DAYS.default, by: context.actor.id, at: deps.clock.now().toISOString(),
    }, context);
    c.header('Cache-Control', 'no-store');
    return c.json({ ...tokenView((await tokenById(deps.db, id))!, deps.clock.now()), token }, 201);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/v1/admin/tokens', tags, summary: 'List machine tokens (never their plaintext)', middleware: [admin] as const,
    request: { query: pageQuery(LIST_PAGE) },
    responses: { 200: ok(TokenPage, 'a page of tokens'), ...registryErrors(ERRORS) },
  }), async (c) => {
    const q = c.req.valid('query');
    const { rows, total } = await listTokens(deps.db, q);
    const now = deps.clock.now();
    return c.json(page('items', rows.map((r) => tokenView(r, now)), total, q), 200);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/v1/admin/tokens/{id}', tags, summary: 'One machine token', middleware: [admin] as const,
    request: { params: IdParam },
    responses: { 200: ok(Token, 'the token'), ...registryErrors({ ...ERRORS, 404: 'token_not_found' }) },
  }), async (c) => c.json(tokenView(await existing(c.req.valid('param').id), deps.clock.now()), 200));

  app.openapi(createRoute({
    method: 'delete', path: '/api/v1/admin/tokens/{id}', tags, summary: 'Revoke a machine token (refused from the next request on)', middleware: [admin] as const,
    request: { params: IdParam },
    responses: { 204: { description: 'revoked (again: nothing changes)' }, ...registryErrors({ ...ERRORS, 404: 'token_not_found' }) },
  }), async (c) => {
    const row = await existing(c.req.valid('param').id);
    const context = actorOf(c);
    await deps.commands.run(tokenStream(row.id), tokenDecider, { type: 'RevokeToken', by: context.actor.id, at: deps.clock.now().toISOString() }, context);
    return c.body(null, 204);
  });

  return app;
}
