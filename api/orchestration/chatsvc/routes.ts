// The chat-service connector's routes (spec 1, "Chat-service integration"), at
// `/api/v1/agents/{profile_id}/chatsvc` (an admin's key or session) and mirrored at
// `/api/admin/agents/{profile_id}/chatsvc` (an admin's browser session, CSRF-checked like every
// session write). Refusals in order: 401 anonymous, 403 not an admin, 503
// `integration_key_missing` without ORCH_INTEGRATION_ENCRYPTION_KEY, then validation, then 404
// `profile_not_found`. The provision token is never stored, logged or echoed. The handlers map
// HTTP to the use cases of ./commands.ts, which do the lookups.

import { createRoute, z } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { CHAT_USERNAME, instanceUrlProblem } from '../../../domain/orchestration/chatsvc/rules.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireAdmin, requireSession } from '../auth/guards.ts';
import { adminArea } from '../auth/admin-area.ts';
import type { OrchEnv } from '../auth/principal.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';
import { integrationKeyMissing } from './clients.ts';
import type { ChatsvcConnector } from './connector.ts';
import { TOOL_NAMES, ToolRequest, ToolResponse, toolBody, type ToolName } from './tools.ts';

const tags = ['chat-service integration'];
const V1 = '/api/v1/agents/{profile_id}/chatsvc';
const ADMIN = '/api/admin/agents/{profile_id}/chatsvc';

const ProfileParam = uuidParams('profile_id');
const ToolParam = ProfileParam.extend({
  tool_name: z.string().openapi({ param: { name: 'tool_name', in: 'path' }, description: TOOL_NAMES.join(', ') }),
});

export const ConnectBody = z
  .strictObject({
    instance_url: z
      .string()
      .min(1)
      .max(2048)
      .openapi({ description: "the chat service's base URL: https, or plain http to a loopback address" }),
    provision_token: z
      .string()
      .regex(/^cb_[0-9a-f]{64}$/, 'provision_token must be cb_ followed by 64 lowercase hex characters')
      .openapi({ description: 'a bot:provision token of the chat service; used once, never stored' }),
    bot_username: z.string().regex(CHAT_USERNAME, 'bot_username: 3-32 letters, digits or underscores'),
    display_name: z.string().min(1).max(64),
    default_community_id: z.uuid().optional().openapi({ description: 'the bot joins it as member' }),
    default_community_role: z.enum(['member']).default('member').optional().openapi({
      description:
        'only member: a bot:provision token joins bots as members (send_message needs the bot raised to community admin on the chat service)',
    }),
    expires_in_hours: z.number().int().min(1).max(87_600).optional().openapi({ description: 'default 720' }),
    verify_tls: z
      .boolean()
      .optional()
      .openapi({ description: "default true; false drops certificate checks for this integration's REST calls only" }),
  })
  .openapi('ChatsvcConnectRequest');

const CommunitiesBody = z
  .strictObject({
    instance_url: z.string().min(1).max(2048),
    provision_token: z
      .string()
      .regex(/^cb_[0-9a-f]{64}$/, 'provision_token must be cb_ followed by 64 lowercase hex characters'),
    verify_tls: z.boolean().optional(),
  })
  .openapi('ChatsvcCommunitiesRequest');

export const IntegrationStatus = z
  .object({
    instance_url: z.string(),
    bot_user_id: z.uuid(),
    bot_username: z.string(),
    token_prefix: z.string(),
    token_expires_at: z.iso.datetime().nullable(),
    status: z.enum(['active', 'revoked_externally']),
    verify_tls: z.boolean(),
    identity_fingerprint: z
      .string()
      .openapi({ description: "hex SHA-256 of the bot's Ed25519 identity key: people can verify the bot with it" }),
    connected_at: z.iso.datetime(),
    socket: z.object({
      state: z.enum(['connecting', 'connected', 'disconnected', 'standby', 'stopped']),
      since: z.iso.datetime().nullable(),
      last_error: z.string().nullable(),
    }),
  })
  .openapi('IntegrationStatus');

const TestResult = z
  .object({ ok: z.boolean(), chatsvc_status: z.number().int(), latency_ms: z.number().int(), status: z.string() })
  .openapi('ChatsvcTestResult');

const BASE_ERRORS = {
  401: 'missing or invalid key',
  403: 'admin role required (the admin mirror: a browser session)',
  503: 'integration_key_missing',
};

/** 503 `integration_key_missing`, after the 401/403 of the guards. */
function keyGate(connector: ChatsvcConnector): MiddlewareHandler<OrchEnv> {
  return async (_c, next) => {
    if (!connector.enabled) throw integrationKeyMissing();
    await next();
  };
}

export function chatsvcRoutes(deps: OrchDeps) {
  const app = orchRouter();
  const connector = deps.chatsvc;
  const forms = [
    // The connector holds bot tokens: the admin role is checked whatever ORCH_ENFORCE_ADMIN_ROLE says.
    { base: V1, middleware: [requireAdmin(true), keyGate(connector)], extraTags: [] as string[] },
    // The mirror is in the admin area (admin-area.ts): its require_admin refuses first.
    {
      base: ADMIN,
      middleware: [adminArea(deps), requireSession(), requireAdmin(true), keyGate(connector)],
      extraTags: ['web UI'],
    },
  ];

  for (const form of forms) {
    const t = [...tags, ...form.extraTags];
    app.openapi(
      createRoute({
        method: 'post',
        path: `${form.base}/connect`,
        tags: t,
        summary: "Provision the profile's bot on a chat service and connect it",
        description:
          'From `revoked_externally`, a connect with the same instance and bot_username reuses that bot and its end-to-end identity ' +
          '(same bot_user_id and identity_fingerprint, sessions kept, a new token). A bot_username whose bot registered keys this profile does not hold ' +
          "(its integration was deleted, or it is another profile's) is refused with 409 `bot_identity_taken`: the chat service lets a bot register its identity only once.",
        middleware: form.middleware as MiddlewareHandler<OrchEnv>[],
        request: { params: ProfileParam, body: jsonBody(ConnectBody) },
        responses: {
          201: ok(IntegrationStatus, 'connected'),
          ...orchErrors({
            ...BASE_ERRORS,
            400: 'validation_failed, insecure_instance_url',
            404: 'profile_not_found',
            409: 'already_connected; bot_identity_taken (the bot of that name registered end-to-end keys this profile does not hold)',
            502: 'chatsvc_mint_bot_failed (detail, chatsvc_status)',
          }),
        },
      }),
      async (c) => {
        const body = c.req.valid('json');
        const problem = instanceUrlProblem(body.instance_url);
        if (problem) throw new ApiError(400, 'insecure_instance_url', problem);
        return c.json(await connector.commands.connect(c.req.valid('param').profile_id, body, actorOf(c)), 201);
      },
    );

    app.openapi(
      createRoute({
        method: 'post',
        path: `${form.base}/communities`,
        tags: t,
        summary: 'The communities a provision token can join the bot to (nothing is stored)',
        middleware: form.middleware as MiddlewareHandler<OrchEnv>[],
        request: { params: ProfileParam, body: jsonBody(CommunitiesBody) },
        responses: {
          200: ok(z.unknown().openapi('ChatsvcCommunities'), "the chat service's list"),
          ...orchErrors({
            ...BASE_ERRORS,
            400: 'validation_failed, insecure_instance_url',
            404: 'profile_not_found',
            502: 'chatsvc_mint_bot_failed',
          }),
        },
      }),
      async (c) => {
        const body = c.req.valid('json');
        const problem = instanceUrlProblem(body.instance_url);
        if (problem) throw new ApiError(400, 'insecure_instance_url', problem);
        return c.json((await connector.commands.communities(c.req.valid('param').profile_id, body)) as never, 200);
      },
    );

    app.openapi(
      createRoute({
        method: 'post',
        path: `${form.base}/test`,
        tags: t,
        summary: 'Probe the stored bot token (GET /api/account/me on the chat service)',
        middleware: form.middleware as MiddlewareHandler<OrchEnv>[],
        request: { params: ProfileParam },
        responses: {
          200: ok(TestResult, 'the probe'),
          ...orchErrors({
            ...BASE_ERRORS,
            404: 'profile_not_found, not_configured',
            409: 'integration_disabled (the chat service refused the token: chatsvc_status 401)',
            502: 'chatsvc_unreachable',
          }),
        },
      }),
      async (c) => {
        return c.json(await connector.commands.test(c.req.valid('param').profile_id, actorOf(c)), 200);
      },
    );

    app.openapi(
      createRoute({
        method: 'get',
        path: form.base,
        tags: t,
        summary: "The integration's status (no chat-service call)",
        middleware: form.middleware as MiddlewareHandler<OrchEnv>[],
        request: { params: ProfileParam },
        responses: {
          200: ok(IntegrationStatus, 'the integration'),
          ...orchErrors({ ...BASE_ERRORS, 404: 'profile_not_found, not_configured' }),
        },
      }),
      async (c) => {
        return c.json(await connector.commands.status(c.req.valid('param').profile_id), 200);
      },
    );

    app.openapi(
      createRoute({
        method: 'delete',
        path: form.base,
        tags: t,
        summary:
          'Drop the integration: socket closed, private keys and sessions destroyed (the chat-side token lives until it expires)',
        middleware: form.middleware as MiddlewareHandler<OrchEnv>[],
        request: { params: ProfileParam },
        responses: {
          204: { description: 'deleted' },
          ...orchErrors({ ...BASE_ERRORS, 404: 'profile_not_found, not_configured' }),
        },
      }),
      async (c) => {
        await connector.commands.remove(c.req.valid('param').profile_id, actorOf(c));
        return c.body(null, 204);
      },
    );

    app.openapi(
      createRoute({
        method: 'post',
        path: `${form.base}/tools/{tool_name}`,
        tags: t,
        summary: 'Run a chat-service tool: send_message, create_channel, invite_member',
        middleware: form.middleware as MiddlewareHandler<OrchEnv>[],
        request: { params: ToolParam, body: jsonBody(ToolRequest) },
        responses: {
          200: ok(ToolResponse, 'the chat service accepted it'),
          ...orchErrors({
            ...BASE_ERRORS,
            400: 'validation_failed, tool_name_mismatch',
            404: 'unknown_tool, profile_not_found, not_configured',
            409: 'integration_disabled',
            429: 'send_message paced: one message per second per webhook (Retry-After)',
            502: 'chatsvc_tool_failed (the chat service was unreachable; other chat 4xx/5xx are mirrored)',
          }),
        },
      }),
      async (c) => {
        const { profile_id, tool_name } = c.req.valid('param');
        if (!(TOOL_NAMES as readonly string[]).includes(tool_name))
          throw new ApiError(404, 'unknown_tool', `unknown tool; one of ${TOOL_NAMES.join(', ')}`);
        const raw = c.req.valid('json') as Record<string, unknown>;
        if (raw.tool !== tool_name)
          throw new ApiError(400, 'tool_name_mismatch', "the body's tool must equal the path's tool_name");
        const parsed = toolBody(tool_name as ToolName).safeParse(raw);
        if (!parsed.success)
          throw new ApiError(
            400,
            'validation_failed',
            parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; '),
          );
        const { tool: _tool, ...input } = parsed.data as Record<string, unknown>;
        const { status, result, retryAfter } = await connector.commands.tool(
          profile_id,
          tool_name as ToolName,
          input,
          actorOf(c),
        );
        if (result.ok) return c.json(result, 200);
        if (retryAfter !== undefined) c.header('Retry-After', String(retryAfter));
        return c.json(
          {
            ...result,
            error: status === 429 ? 'rate_limited' : 'chatsvc_tool_failed',
            message: result.error_msg ?? 'the chat service refused the call',
            ...(retryAfter !== undefined ? { retry_after: retryAfter } : {}),
          } as never,
          status as never,
        );
      },
    );
  }
  return app;
}
