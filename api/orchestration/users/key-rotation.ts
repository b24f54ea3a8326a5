// API-key rotation: only from an interactive browser session that passes a same-origin and a
// CSRF check; any bearer credential is refused. Every attempt, refused or not, is an event and a
// row of `api_key_rotations` (never a key value). The old key is refused once this answers.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { RotationRefusalReason } from '../../../domain/orchestration/users/events.ts';
import { userById, type UserRow } from '../../../projections/orchestration/users.ts';
import { checkedByHandler } from '../../shared/route-policy.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { ok } from '../../shared/openapi.ts';
import { actorOf, MISSING_KEY, roleOf } from '../auth/guards.ts';
import type { OrchEnv } from '../auth/principal.ts';
import { sessionRequestTrusted } from '../auth/session-cookies.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';
import { refuseRotation, rotateKey } from './commands.ts';
import { Rotation } from './schemas.ts';

export const ROTATION_MESSAGES: Record<RotationRefusalReason, string> = {
  api_key_rotation_requires_interactive_session: 'API keys can only be rotated from an interactive session, not with a bearer credential',
  api_key_rotation_csrf: 'same-origin or CSRF check failed',
  api_key_rotation_requires_admin: 'rotating another account\'s key requires the admin role',
  api_key_rotation_not_found: 'no such user',
  api_key_rotation_service_principal: 'the runner\'s key is rotated through its configuration, not here',
  api_key_rotation_agent_credential: 'agent credentials rotate through POST /api/v1/agents/{id}/credential/rotate',
  unauthenticated: MISSING_KEY,
};
export const ROTATION_STATUS: Record<RotationRefusalReason, 401 | 403 | 404 | 409> = {
  api_key_rotation_requires_interactive_session: 403,
  api_key_rotation_csrf: 403,
  api_key_rotation_requires_admin: 403,
  api_key_rotation_not_found: 404,
  api_key_rotation_service_principal: 409,
  api_key_rotation_agent_credential: 409,
  unauthenticated: 401,
};

const tags = ['accounts and keys'];
const errors = orchErrors({
  401: 'no session', 403: 'api_key_rotation_requires_interactive_session, api_key_rotation_csrf, api_key_rotation_requires_admin',
  404: 'api_key_rotation_not_found', 409: 'api_key_rotation_service_principal, api_key_rotation_agent_credential',
});

export function keyRotationRoutes(deps: OrchDeps) {
  /** Checks shared by both routes; returns the account whose key to rotate, or throws the recorded refusal. */
  async function gate(c: Context<OrchEnv>, route: 'self' | 'admin', requested: string | null): Promise<UserRow> {
    const principal = c.get('principal');
    const caller = principal.kind === 'anonymous' ? null : principal.user.id;
    // The attempted target: the named account on the admin route (when it is an id at all), else the caller.
    const targetId = route === 'admin' ? (requested && z.uuid().safeParse(requested).success ? requested : null) : caller;
    const refuse = async (reason: RotationRefusalReason): Promise<never> => {
      await refuseRotation(deps, { actor_id: caller, actor_kind: principal.kind, target_user_id: targetId, route, reason }, actorOf(c));
      throw new ApiError(ROTATION_STATUS[reason], reason === 'unauthenticated' ? 'unauthorized' : reason, ROTATION_MESSAGES[reason]);
    };
    const bearer = c.get('apiKeyPresented') || !!c.req.header('authorization') || (principal.kind !== 'anonymous' && principal.via === 'api_key');
    if (bearer) return refuse('api_key_rotation_requires_interactive_session');
    if (principal.kind !== 'account' || principal.via !== 'session') return refuse('unauthenticated');
    if (!sessionRequestTrusted(c, deps.sealKey, principal.sessionId)) return refuse('api_key_rotation_csrf');
    if (route === 'self') return principal.user;
    // This route checks the admin role itself, whatever ORCH_ENFORCE_ADMIN_ROLE says: it hands out keys.
    if (roleOf(principal) !== 'admin') return refuse('api_key_rotation_requires_admin');
    const target = targetId ? await userById(deps.db, targetId) : null;
    if (!target) return refuse('api_key_rotation_not_found');
    if (target.principal_type === 'service') return refuse('api_key_rotation_service_principal');
    if (target.principal_type === 'agent') return refuse('api_key_rotation_agent_credential');
    return target;
  }

  async function rotate(c: Context<OrchEnv>, target: UserRow, reason: 'self_service' | 'admin') {
    const { apiKey, rotatedAt } = await rotateKey(deps, target.id, reason, actorOf(c));
    c.header('Cache-Control', 'no-store');
    return c.json({
      user_id: target.id,
      username: target.username,
      api_key: apiKey,
      rotated_at: rotatedAt,
      message: 'API key rotated; the previous key no longer works',
    }, 200);
  }

  const app = orchRouter();
  const selfRoute = createRoute({
    method: 'post', path: '/api/v1/me/api-key/rotate', tags, summary: 'Rotate the caller\'s API key (interactive session only)',
    // The gate refuses, and records, every caller but a browser session.
    middleware: [checkedByHandler({ rule: 'session' })],
    responses: { 200: ok(Rotation, 'the new key, shown once (Cache-Control: no-store)'), ...errors },
  });
  const adminRoute = createRoute({
    method: 'post', path: '/api/v1/admin/users/{user_id}/api-key/rotate', tags, summary: 'Rotate another account\'s API key (admin, interactive session only)',
    // The gate's admin check holds whatever ORCH_ENFORCE_ADMIN_ROLE says: it hands out keys.
    middleware: [checkedByHandler({ rule: 'session' }), checkedByHandler({ rule: 'admin' })],
    // Any value: the gate records every refusal in its order, an id that is not a UUID too (404 api_key_rotation_not_found).
    request: { params: z.object({ user_id: z.string().openapi({ param: { name: 'user_id', in: 'path' }, description: 'the account id' }) }) },
    responses: { 200: ok(Rotation, 'the new key, shown once (Cache-Control: no-store)'), ...errors },
  });
  const rotateSelf = async (c: Context<OrchEnv>) => rotate(c, await gate(c, 'self', null), 'self_service');
  const rotateOther = async (c: Context<OrchEnv>) => rotate(c, await gate(c, 'admin', c.req.param('user_id') ?? null), 'admin');
  app.openapi(selfRoute, rotateSelf);
  app.openapi(adminRoute, rotateOther);
  // The web UI's mirrors (/api/me/api-key/rotate, /api/admin/users/{user_id}/api-key/rotate): the
  // same routes, which already serve interactive sessions only. Not through withWebUiMirror: its
  // requireSession would turn a keyed caller away before the gate, unrecorded; here the gate
  // refuses it (403 api_key_rotation_requires_interactive_session) and records the attempt, as
  // on /api/v1/.
  for (const route of [selfRoute, adminRoute]) {
    const path = `/api/${route.path.slice('/api/v1/'.length)}`;
    app.openapi({
      ...route, path, tags: [...tags, 'web UI'],
      description: `${route.summary} (web UI mirror of ${route.path}: browser sessions only; every refusal recorded as there)`,
    }, route === selfRoute ? rotateSelf : rotateOther);
  }
  return app;
}
