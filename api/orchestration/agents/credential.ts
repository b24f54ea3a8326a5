// POST /api/v1/agents/{id}/credential/rotate: an admin, from an interactive browser session, like
// the account rotation (users/key-rotation.ts): any bearer credential is refused, the session
// must pass the same-origin and CSRF checks, and every attempt, refused or not, is recorded. The
// new agent key is shown once. Mounted before the app's CSRF middleware, so it answers and
// records its own refusals.

import { createRoute, z } from '@hono/zod-openapi';
import type { RotationRefusalReason } from '../../../domain/orchestration/users/events.ts';
import { agentById } from '../../../projections/orchestration/agents.ts';
import { checkedByHandler } from '../../shared/route-policy.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { ok } from '../../shared/openapi.ts';
import { actorOf, roleOf } from '../auth/guards.ts';
import { sessionRequestTrusted } from '../auth/session-cookies.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';
import { refuseRotation, rotateKey } from '../users/commands.ts';
import { ROTATION_MESSAGES, ROTATION_STATUS } from '../users/key-rotation.ts';
import { AgentIdParam, CredentialRotation } from './schemas.ts';

export function agentCredentialRoutes(deps: OrchDeps) {
  const app = orchRouter();
  app.openapi(createRoute({
    method: 'post', path: '/api/v1/agents/{id}/credential/rotate', tags: ['agents'], summary: 'Rotate an agent\'s credential (admin, interactive session only)',
    // The handler refuses, and records, every caller but an admin's browser session.
    middleware: [checkedByHandler({ rule: 'session' }), checkedByHandler({ rule: 'admin' })],
    request: { params: AgentIdParam },
    responses: {
      200: ok(CredentialRotation, 'the new agent key, shown once (Cache-Control: no-store)'),
      ...orchErrors({
        401: 'no session', 403: 'api_key_rotation_requires_interactive_session, api_key_rotation_csrf, api_key_rotation_requires_admin',
        404: 'api_key_rotation_not_found',
      }),
    },
  }), async (c) => {
    const principal = c.get('principal');
    const requested = c.req.valid('param').id;
    const targetId = z.uuid().safeParse(requested).success ? requested : null;
    const refuse = async (reason: RotationRefusalReason): Promise<never> => {
      await refuseRotation(deps, {
        actor_id: principal.kind === 'anonymous' ? null : principal.user.id, actor_kind: principal.kind, target_user_id: targetId, route: 'admin', reason,
      }, actorOf(c));
      throw new ApiError(ROTATION_STATUS[reason], reason === 'unauthenticated' ? 'unauthorized' : reason, ROTATION_MESSAGES[reason]);
    };
    const bearer = c.get('apiKeyPresented') || !!c.req.header('authorization') || (principal.kind !== 'anonymous' && principal.via === 'api_key');
    if (bearer) return refuse('api_key_rotation_requires_interactive_session');
    if (principal.kind !== 'account' || principal.via !== 'session') return refuse('unauthenticated');
    if (!sessionRequestTrusted(c, deps.sealKey, principal.sessionId)) return refuse('api_key_rotation_csrf');
    if (roleOf(principal) !== 'admin') return refuse('api_key_rotation_requires_admin');
    const agent = targetId ? await agentById(deps.db, targetId) : null;
    if (!agent) return refuse('api_key_rotation_not_found');
    const { apiKey, rotatedAt } = await rotateKey(deps, agent.id, 'admin', actorOf(c));
    c.header('Cache-Control', 'no-store');
    return c.json({ agent_id: agent.id, api_key: apiKey, rotated_at: rotatedAt, message: 'agent credential rotated; the previous key no longer works' }, 200);
  });
  return app;
}
