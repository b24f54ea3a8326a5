// API-key rotation: only from an interactive browser session that passes a same-origin and a
// CSRF check; any bearer credential is refused. Every attempt, refused or not, is an event and a
// row of `api_key_rotations` (never a key value). The old key is refused once this answers.

import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { RotationRefusalReason } from '../../../domain/orchestration/security/events.ts';
import type { Platform } from '../../../infra/platform.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { userById, type UserRow } from '../accounts/queries.ts';
import { refuseRotation, rotateKey } from '../accounts/service.ts';
import { actorOf, MISSING_KEY, roleOf, sessionRequestTrusted, type OrchEnv } from '../auth.ts';

const MESSAGES: Record<RotationRefusalReason, string> = {
  api_key_rotation_requires_interactive_session: 'API keys can only be rotated from an interactive session, not with a bearer credential',
  api_key_rotation_csrf: 'same-origin or CSRF check failed',
  api_key_rotation_requires_admin: 'rotating another account\'s key requires the admin role',
  api_key_rotation_not_found: 'no such user',
  api_key_rotation_service_principal: 'the runner\'s key is rotated through its configuration, not here',
  api_key_rotation_agent_credential: 'agent credentials rotate through POST /api/v1/agents/{id}/credential/rotate',
  unauthenticated: MISSING_KEY,
};
const STATUS: Record<RotationRefusalReason, 401 | 403 | 404 | 409> = {
  api_key_rotation_requires_interactive_session: 403,
  api_key_rotation_csrf: 403,
  api_key_rotation_requires_admin: 403,
  api_key_rotation_not_found: 404,
  api_key_rotation_service_principal: 409,
  api_key_rotation_agent_credential: 409,
  unauthenticated: 401,
};

export function keyRotationRoutes(platform: Platform) {
  /** Checks shared by both routes; returns the signed-in caller or throws the recorded refusal. */
  async function gate(c: Context<OrchEnv>, route: 'self' | 'admin', requested: string | null): Promise<UserRow> {
    const principal = c.get('principal');
    const caller = principal.kind === 'anonymous' ? null : principal.user.id;
    // The attempted target: the named account on the admin route (when it is an id at all), else the caller.
    const targetId = route === 'admin' ? (requested && z.uuid().safeParse(requested).success ? requested : null) : caller;
    const refuse = async (reason: RotationRefusalReason): Promise<never> => {
      await refuseRotation(platform, { actor_id: caller, actor_kind: principal.kind, target_user_id: targetId, route, reason }, actorOf(c));
      throw new ApiError(STATUS[reason], reason === 'unauthenticated' ? 'unauthorized' : reason, MESSAGES[reason]);
    };
    const bearer = c.get('apiKeyPresented') || !!c.req.header('authorization') || (principal.kind !== 'anonymous' && principal.via === 'api_key');
    if (bearer) return refuse('api_key_rotation_requires_interactive_session');
    if (principal.kind !== 'account' || principal.via !== 'session') return refuse('unauthenticated');
    if (!sessionRequestTrusted(c, platform, principal.sessionId)) return refuse('api_key_rotation_csrf');
    if (route === 'self') return principal.user;
    // The admin check of this route stays on whatever ORCH_ENFORCE_ADMIN_ROLE says: it hands out keys.
    if (roleOf(principal) !== 'admin') return refuse('api_key_rotation_requires_admin');
    const target = targetId ? await userById(platform.pool, targetId) : null;
    if (!target) return refuse('api_key_rotation_not_found');
    if (target.principal_type === 'service') return refuse('api_key_rotation_service_principal');
    if (target.principal_type === 'agent') return refuse('api_key_rotation_agent_credential');
    return target;
  }

  async function rotate(c: Context<OrchEnv>, target: UserRow, reason: 'self_service' | 'admin') {
    const { apiKey, rotatedAt } = await rotateKey(platform, target.id, reason, actorOf(c));
    c.header('Cache-Control', 'no-store');
    return c.json({
      user_id: target.id,
      username: target.username,
      api_key: apiKey,
      rotated_at: rotatedAt,
      message: 'API key rotated; the previous key no longer works',
    });
  }

  return new Hono<OrchEnv>()
    .post('/api/v1/me/api-key/rotate', async (c) => rotate(c, await gate(c, 'self', null), 'self_service'))
    .post('/api/v1/admin/users/:user_id/api-key/rotate', async (c) => {
      const targetId = c.req.param('user_id');
      return rotate(c, await gate(c, 'admin', targetId), 'admin');
    });
}
