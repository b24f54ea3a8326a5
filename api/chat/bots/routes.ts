// Bot administration (spec "Bot administration"): GET/POST /api/admin/bots, GET/DELETE
// /api/admin/bots/{id}, POST .../tokens, POST .../tokens/{tid}/revoke, GET/POST/DELETE
// .../communities, GET /api/admin/communities, POST /api/admin/bots/bootstrap-token,
// GET/POST /api/admin/integrations, and POST /api/keys/register (a bot's first keys).
//
// Who: an admin JWT everywhere; a `bot:provision` token to create, list and get bots, mint
// `default` tokens for them, join them to a community as `member` and list communities; never
// to delete a bot, revoke a token or remove a bot from a community (403).

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { constantTimeEqual, hashToken } from '../../../crypto/tokens.ts';
import { USERNAME_PATTERN } from '../../../domain/chat/accounts/decider.ts';
import { BOT_SCOPES } from '../../../domain/chat/bots/events.ts';
import {
  allCommunities,
  communitiesOfUser,
  integrationTokens,
  listBots,
  tokensOfBots,
  type AdminCommunityRow,
  type BotRow,
  type BotTokenRow,
} from '../../../projections/chat/bots.ts';
import { ApiError, rateLimited } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';
import { peerAddress } from '../../shared/peer.ts';
import { checkedByHandler } from '../../shared/route-policy.ts';
import { OneTimePrekeyBody, SignedPrekeyBody } from '../accounts/schemas.ts';
import { actorOf, requireBotAdmin, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import {
  bootstrapToken,
  botOf,
  createBot,
  createIntegration,
  deleteBot,
  joinBotToCommunity,
  mintBotToken,
  registerKeys,
  removeBotFromCommunity,
  revokeBotToken,
} from './commands.ts';

const tags = ['bots'];
const BOT_ADMIN_ERRORS = {
  ...AUTH_ERRORS,
  400: 'X-Bot-Token and Authorization both sent',
  403: 'not an instance admin, or a bot token of another scope',
};
const ADMIN_JWT_ERRORS = {
  ...AUTH_ERRORS,
  400: 'X-Bot-Token and Authorization both sent',
  403: 'an admin access token is required (bot tokens are refused)',
};
/** Bootstrap attempts per client address a minute: the deploy secret is not for guessing. */
export const BOOTSTRAP_RULE = { limit: 10, windowMs: 60_000 };
export const BOOTSTRAP_LABEL = 'provisioning';

const TokenView = z
  .object({
    id: z.uuid(),
    bot_id: z.uuid(),
    prefix: z.string().openapi({ description: 'the first 11 characters (cb_ + 8 hex)' }),
    scope: z.enum(BOT_SCOPES),
    label: z.string().nullable(),
    expires_at: z.iso.datetime().nullable(),
    rate_limit_per_window: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'requests per 10 s; null: the default 60' }),
    created_at: z.iso.datetime(),
    revoked_at: z.iso.datetime().nullable(),
    last_used_at: z.iso.datetime().nullable().openapi({ description: 'coalesced to the minute' }),
    status: z.enum(['active', 'expired', 'revoked']),
  })
  .openapi('BotToken');

const MintedToken = z
  .object({
    id: z.uuid(),
    bot_id: z.uuid(),
    token: z.string().openapi({ description: 'cb_ + 64 hex; shown only this once' }),
    prefix: z.string(),
    scope: z.enum(BOT_SCOPES),
    label: z.string().nullable(),
    expires_at: z.iso.datetime().nullable(),
    rate_limit_per_window: z.number().int().nullable(),
    created_at: z.iso.datetime(),
  })
  .openapi('MintedBotToken');

const Bot = z
  .object({
    id: z.uuid(),
    username: z.string(),
    display_name: z.string(),
    is_bot: z.literal(true),
    created_by: z.uuid().nullable(),
    integration: z.string().nullable(),
    created_at: z.iso.datetime(),
    suspended: z.boolean(),
    has_identity_key: z.boolean(),
    tokens: z.array(TokenView),
  })
  .openapi('Bot');

const AdminCommunity = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string(),
    discoverable: z.boolean(),
    member_count: z.number().int(),
    created_at: z.iso.datetime(),
  })
  .openapi('AdminCommunity');

const MintBody = z
  .strictObject({
    scope: z
      .enum(BOT_SCOPES)
      .optional()
      .openapi({ description: 'default `default`; a bot:provision caller mints `default` only' }),
    label: z.string().trim().max(100).optional(),
    expires_in_hours: z
      .number()
      .int()
      .min(1)
      .max(24 * 365 * 10)
      .nullable()
      .optional()
      .openapi({ description: 'omitted or null: never expires' }),
    rate_limit_per_window: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .nullable()
      .optional()
      .openapi({ description: 'requests per 10 s (default 60)' }),
  })
  .openapi('MintBotTokenRequest');

const BotParam = uuidParams('id');

export function botRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const provisionAuth = requireChatUser(deps, { bots: ['bot:provision'] });
  const adminAuth = requireChatUser(deps, { bots: [] });
  const provisionOrAdmin = requireBotAdmin({ provision: true });
  const adminOnly = requireBotAdmin({ provision: false });
  const now = () => deps.clock.now();
  const tokenView = (t: BotTokenRow) => ({
    id: t.id,
    bot_id: t.bot_id,
    prefix: t.prefix,
    scope: t.scope,
    label: t.label,
    expires_at: t.expires_at?.toISOString() ?? null,
    rate_limit_per_window: t.rate_limit_per_window,
    created_at: t.created_at.toISOString(),
    revoked_at: t.revoked_at?.toISOString() ?? null,
    last_used_at: t.last_used_at?.toISOString() ?? null,
    status: t.revoked_at
      ? ('revoked' as const)
      : t.expires_at && t.expires_at.getTime() <= now().getTime()
        ? ('expired' as const)
        : ('active' as const),
  });
  const botView = (b: BotRow, tokens: BotTokenRow[]) => ({
    id: b.id,
    username: b.username,
    display_name: b.display_name,
    is_bot: true as const,
    created_by: b.created_by,
    integration: b.integration,
    created_at: b.created_at.toISOString(),
    suspended: b.suspended_at !== null,
    has_identity_key: b.has_identity_key,
    tokens: tokens.filter((t) => t.bot_id === b.id).map(tokenView),
  });
  const communityView = (r: AdminCommunityRow) => ({
    id: r.id,
    name: r.name,
    description: r.description,
    discoverable: r.discoverable,
    member_count: r.member_count,
    created_at: r.created_at.toISOString(),
  });
  const fullBot = async (id: string) => {
    const row = await botOf(deps.db, id);
    return botView(row, await tokensOfBots(deps.db, [row.id]));
  };
  const callerId = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/bots/bootstrap-token',
      tags,
      summary: 'Mint the first bot:provision token with the deploy secret',
      // The deploy secret in a header is the credential, whoever sends it (the handler checks it).
      middleware: checkedByHandler({ rule: 'deploy secret' }),
      description:
        'Header `X-Provision-Bootstrap-Secret` (compared as SHA-256 digests in constant time); no access token. Finds or creates the integration bot ' +
        `\`integration-<label>\` (default label \`${BOOTSTRAP_LABEL}\`; never an admin) and mints a bot:provision token for it; repeated calls return the same bot and a new token. ` +
        '404 when CHATSVC_BOOTSTRAP_SECRET is unset.',
      request: {
        headers: z.object({ 'x-provision-bootstrap-secret': z.string().optional() }),
        body: {
          ...jsonBody(
            z
              .strictObject({
                label: z.string().trim().min(1).max(64).optional(),
                expires_in_hours: z
                  .number()
                  .int()
                  .min(1)
                  .max(24 * 365 * 10)
                  .optional(),
              })
              .openapi('BootstrapTokenRequest'),
          ),
          required: false,
        },
      },
      responses: {
        201: ok(
          z.object({ bot: Bot, token: MintedToken }).openapi('BootstrapToken'),
          'the integration bot and a new bot:provision token (shown once)',
        ),
        ...chatErrors({
          400: 'validation error',
          401: 'missing or wrong secret',
          404: 'no bootstrap secret is configured',
          429: 'too many attempts from this address (Retry-After)',
        }),
      },
    }),
    async (c) => {
      const configured = deps.config.bootstrapSecret;
      if (!configured) throw new ApiError(404, 'not_found', 'no such route');
      const decision = await deps.limiter.consume(`chat:bootstrap:${peerAddress(c) ?? 'unknown'}`, BOOTSTRAP_RULE);
      if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, 'too many bootstrap attempts');
      const presented = c.req.header('x-provision-bootstrap-secret') ?? '';
      if (!constantTimeEqual(hashToken(presented), hashToken(configured)))
        throw new ApiError(401, 'unauthorized', 'missing or wrong X-Provision-Bootstrap-Secret');
      const body = (c.req.header('content-type') ? await c.req.json().catch(() => ({})) : {}) as {
        label?: unknown;
        expires_in_hours?: unknown;
      };
      const parsed = z
        .strictObject({
          label: z.string().trim().min(1).max(64).optional(),
          expires_in_hours: z
            .number()
            .int()
            .min(1)
            .max(24 * 365 * 10)
            .optional(),
        })
        .safeParse(body ?? {});
      if (!parsed.success)
        throw new ApiError(
          400,
          'validation_failed',
          parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        );
      const context = { actor: { kind: 'system' as const, id: 'bootstrap' }, correlationId: c.get('requestId') };
      const { row, minted } = await bootstrapToken(
        deps,
        { label: parsed.data.label ?? BOOTSTRAP_LABEL, expires_in_hours: parsed.data.expires_in_hours ?? null },
        context,
      );
      c.header('Cache-Control', 'no-store');
      return c.json({ bot: await fullBot(row.id), token: minted }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/bots',
      tags,
      summary: 'Bots with their tokens (never the token values)',
      middleware: [provisionAuth, provisionOrAdmin] as const,
      request: { query: pageQuery({ defaultLimit: 50, maxLimit: 200 }) },
      responses: {
        200: ok(z.object({ bots: z.array(Bot), ...pageFields }).openapi('BotPage'), 'oldest first'),
        ...chatErrors(BOT_ADMIN_ERRORS),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await listBots(deps.db, q.limit, q.offset);
      const tokens = await tokensOfBots(
        deps.db,
        rows.map((r) => r.id),
      );
      return c.json(
        page(
          'bots',
          rows.map((r) => botView(r, tokens)),
          total,
          q,
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/bots',
      tags,
      summary: 'Create a bot account (no password, no keys until it registers them)',
      middleware: [provisionAuth, provisionOrAdmin] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              username: z.string().regex(USERNAME_PATTERN, 'letters, digits and underscores, 3 to 32'),
              display_name: z.string().trim().min(1).max(64).optional(),
            })
            .openapi('CreateBotRequest'),
        ),
      },
      responses: {
        201: ok(Bot, 'the bot'),
        ...chatErrors({
          ...BOT_ADMIN_ERRORS,
          400: 'validation error, or both credentials sent',
          409: 'username taken',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const row = await createBot(
        deps,
        {
          username: body.username,
          display_name: body.display_name ?? body.username,
          created_by: callerId(c),
          integration: null,
        },
        actorOf(c),
      );
      return c.json(botView(row, []), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/bots/{id}',
      tags,
      summary: 'A bot and its tokens',
      middleware: [provisionAuth, provisionOrAdmin] as const,
      request: { params: BotParam },
      responses: { 200: ok(Bot, 'the bot'), ...chatErrors({ ...BOT_ADMIN_ERRORS, 404: 'no such bot' }) },
    }),
    async (c) => c.json(await fullBot(c.req.valid('param').id), 200),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/admin/bots/{id}',
      tags,
      summary: 'Delete a bot (admin access token only): its tokens stop working at once',
      middleware: [adminAuth, adminOnly] as const,
      request: { params: BotParam },
      responses: { 204: { description: 'deleted' }, ...chatErrors({ ...ADMIN_JWT_ERRORS, 404: 'no such bot' }) },
    }),
    async (c) => {
      await deleteBot(deps, { bot_id: c.req.valid('param').id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/bots/{id}/tokens',
      tags,
      summary: 'Mint a token for a bot (plaintext shown once)',
      description:
        'Scopes: `default` (full bot permissions; the default), `metrics` (only GET /api/v1/metrics/cockpit), `bot:provision` (bot administration). ' +
        'A bot:provision caller mints `default` tokens only.',
      middleware: [provisionAuth, provisionOrAdmin] as const,
      request: { params: BotParam, body: jsonBody(MintBody) },
      responses: {
        201: ok(MintedToken, 'the token, shown only this once'),
        ...chatErrors({
          ...BOT_ADMIN_ERRORS,
          400: 'validation error (unknown scope), or both credentials sent',
          404: 'no such bot',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const minted = await mintBotToken(
        deps,
        {
          bot_id: c.req.valid('param').id,
          user_id: callerId(c),
          bot_caller: !!c.get('chatUser').bot,
          scope: body.scope ?? 'default',
          label: body.label || null,
          expires_in_hours: body.expires_in_hours ?? null,
          rate_limit_per_window: body.rate_limit_per_window ?? null,
        },
        actorOf(c),
      );
      c.header('Cache-Control', 'no-store');
      return c.json(minted, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/bots/{id}/tokens/{tid}/revoke',
      tags,
      summary: 'Revoke a bot token (admin access token only); refused from the next request on',
      middleware: [adminAuth, adminOnly] as const,
      request: { params: uuidParams('id', 'tid') },
      responses: {
        200: ok(TokenView, 'the revoked token'),
        ...chatErrors({ ...ADMIN_JWT_ERRORS, 404: 'no such bot or token' }),
      },
    }),
    async (c) => {
      const { id, tid } = c.req.valid('param');
      const token = await revokeBotToken(deps, { bot_id: id, token_id: tid, user_id: callerId(c) }, actorOf(c));
      return c.json(tokenView(token), 200);
    },
  );

  const Membership = z
    .object({ community_id: z.uuid(), name: z.string(), role: z.string(), member_count: z.number().int() })
    .openapi('BotCommunity');

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/bots/{id}/communities',
      tags,
      summary: "Join a bot to a community; it also joins the community's public groups and their channels",
      description: 'role: `member` (the default; the only one a bot:provision token may give), `moderator` or `admin`.',
      middleware: [provisionAuth, provisionOrAdmin] as const,
      request: {
        params: BotParam,
        body: jsonBody(
          z
            .strictObject({ community_id: z.uuid(), role: z.enum(['member', 'moderator', 'admin']).default('member') })
            .openapi('JoinBotRequest'),
        ),
      },
      responses: {
        200: ok(
          Membership.extend({ channels_joined: z.array(z.uuid()) }).openapi('BotJoined'),
          'the membership and the channels joined',
        ),
        ...chatErrors({
          ...BOT_ADMIN_ERRORS,
          400: 'validation error, or both credentials sent',
          403: 'a bot:provision token asked for a role above member, the bot is banned there, or not an admin',
          404: 'no such bot or community',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const { membership, joined } = await joinBotToCommunity(
        deps,
        {
          bot_id: c.req.valid('param').id,
          community_id: body.community_id,
          role: body.role,
          user_id: callerId(c),
          bot_caller: !!c.get('chatUser').bot,
        },
        actorOf(c),
      );
      return c.json(
        {
          community_id: membership.id,
          name: membership.name,
          role: membership.role,
          member_count: membership.member_count,
          channels_joined: joined,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/bots/{id}/communities',
      tags,
      summary: 'The communities a bot belongs to',
      middleware: [provisionAuth, provisionOrAdmin] as const,
      request: { params: BotParam },
      responses: {
        200: ok(z.object({ communities: z.array(Membership) }).openapi('BotCommunities'), 'oldest first'),
        ...chatErrors({ ...BOT_ADMIN_ERRORS, 404: 'no such bot' }),
      },
    }),
    async (c) => {
      const row = await botOf(deps.db, c.req.valid('param').id);
      return c.json(
        {
          communities: (await communitiesOfUser(deps.db, row.id)).map((m) => ({
            community_id: m.id,
            name: m.name,
            role: m.role,
            member_count: m.member_count,
          })),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/admin/bots/{id}/communities/{cid}',
      tags,
      summary: 'Remove a bot from a community (admin access token only)',
      description:
        "The bot leaves the community's groups and channels too; the remaining members of each channel are told to rotate their sender keys (SenderKeyRotationRequired).",
      middleware: [adminAuth, adminOnly] as const,
      request: { params: uuidParams('id', 'cid') },
      responses: {
        204: { description: 'removed' },
        ...chatErrors({ ...ADMIN_JWT_ERRORS, 404: 'no such bot or community, or the bot is not a member' }),
      },
    }),
    async (c) => {
      const { id, cid } = c.req.valid('param');
      await removeBotFromCommunity(deps, { bot_id: id, community_id: cid, user_id: callerId(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/communities',
      tags,
      summary: 'Every community of the instance (to join bots to)',
      middleware: [provisionAuth, provisionOrAdmin] as const,
      responses: {
        200: ok(z.object({ communities: z.array(AdminCommunity) }).openapi('AdminCommunities'), 'oldest first'),
        ...chatErrors(BOT_ADMIN_ERRORS),
      },
    }),
    async (c) => c.json({ communities: (await allCommunities(deps.db)).map(communityView) }, 200),
  );

  const Integration = z
    .object({
      token_id: z.uuid(),
      bot_id: z.uuid(),
      bot_username: z.string(),
      prefix: z.string(),
      scope: z.enum(BOT_SCOPES),
      label: z.string().nullable(),
      expires_at: z.iso.datetime().nullable(),
      last_used_at: z.iso.datetime().nullable(),
      created_at: z.iso.datetime(),
      status: z.enum(['active', 'expired']),
    })
    .openapi('Integration');

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/integrations',
      tags,
      summary: 'Every active or expired token of a non-default scope (admin access token only)',
      middleware: [adminAuth, adminOnly] as const,
      responses: {
        200: ok(z.object({ integrations: z.array(Integration) }).openapi('Integrations'), 'newest first'),
        ...chatErrors(ADMIN_JWT_ERRORS),
      },
    }),
    async (c) => {
      const rows = await integrationTokens(deps.db);
      return c.json(
        {
          integrations: rows.map((t) => {
            const v = tokenView(t);
            return {
              token_id: t.id,
              bot_id: t.bot_id,
              bot_username: t.bot_username,
              prefix: t.prefix,
              scope: t.scope,
              label: t.label,
              expires_at: v.expires_at,
              last_used_at: v.last_used_at,
              created_at: v.created_at,
              status: v.status as 'active' | 'expired',
            };
          }),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/integrations',
      tags,
      summary:
        'Create an integration: its bot (integration-<label>) and a scoped token in one call (admin access token only)',
      middleware: [adminAuth, adminOnly] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              label: z.string().trim().min(1).max(64),
              scope: z.enum(['metrics', 'bot:provision']).default('metrics'),
              expires_in_hours: z
                .number()
                .int()
                .min(1)
                .max(24 * 365 * 10)
                .nullable()
                .optional(),
              rate_limit_per_window: z.number().int().min(1).max(100_000).nullable().optional(),
            })
            .openapi('CreateIntegrationRequest'),
        ),
      },
      responses: {
        201: ok(
          z.object({ bot: Bot, token: MintedToken }).openapi('CreatedIntegration'),
          'the bot and its token (shown only this once)',
        ),
        ...chatErrors({
          ...ADMIN_JWT_ERRORS,
          400: 'validation error, or both credentials sent',
          409: 'the integration username is taken by a non-bot account',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const { row, minted } = await createIntegration(
        deps,
        {
          label: body.label,
          scope: body.scope,
          expires_in_hours: body.expires_in_hours ?? null,
          rate_limit_per_window: body.rate_limit_per_window ?? null,
          user_id: callerId(c),
        },
        actorOf(c),
      );
      c.header('Cache-Control', 'no-store');
      return c.json({ bot: await fullBot(row.id), token: minted }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/keys/register',
      tags: ['keys'],
      summary:
        "Register the caller's first keys (a bot, which has none until then): identity key, signed prekey, one-time prekeys",
      middleware: [requireChatUser(deps)] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({
              identity_key: z.array(z.number().int().min(0).max(255)).length(32),
              signed_prekey: SignedPrekeyBody,
              one_time_prekeys: z.array(OneTimePrekeyBody).max(200).default([]),
            })
            .openapi('RegisterKeysRequest'),
        ),
      },
      responses: {
        201: ok(
          z.object({ user_id: z.uuid(), one_time_prekeys: z.number().int() }).openapi('KeysRegistered'),
          'registered',
        ),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error, invalid key or signature',
          409: 'keys are already registered',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const userId = callerId(c);
      const body = c.req.valid('json');
      await registerKeys(deps, { user_id: userId, ...body }, actorOf(c));
      return c.json({ user_id: userId, one_time_prekeys: body.one_time_prekeys.length }, 201);
    },
  );

  return app;
}
