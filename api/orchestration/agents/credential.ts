// POST /api/v1/agents/{id}/credential/rotate: an admin, from an interactive browser session, like
// the account rotation (users/key-rotation.ts): any bearer credential is refused, the session
// must pass the same-origin and CSRF checks, and every attempt, refused or not, is recorded. The
// new agent key is shown once. Mounted before the app's CSRF middleware, so it answers and
// records its own refusals.

import { createRoute } from '@hono/zod-openapi';
import { checkedByHandler } from '../../shared/route-policy.ts';
import { ok } from '../../shared/openapi.ts';
import { actorOf } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';
import { rotationAttempt } from '../users/key-rotation.ts';
import { AgentIdParam, CredentialRotation } from './schemas.ts';
import { rotateAgentCredential } from './commands.ts';

export function agentCredentialRoutes(deps: OrchDeps) {
  const app = orchRouter();
  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/agents/{id}/credential/rotate',
      tags: ['agents'],
      summary: "Rotate an agent's credential (admin, interactive session only)",
      // rotateAgentCredential refuses, and records, every caller but an admin's browser session.
      middleware: [checkedByHandler({ rule: 'session' }), checkedByHandler({ rule: 'admin' })],
      request: { params: AgentIdParam },
      responses: {
        200: ok(CredentialRotation, 'the new agent key, shown once (Cache-Control: no-store)'),
        ...orchErrors({
          401: 'no session',
          403: 'api_key_rotation_requires_interactive_session, api_key_rotation_csrf, api_key_rotation_requires_admin',
          404: 'api_key_rotation_not_found',
        }),
      },
    }),
    async (c) => {
      const attempt = rotationAttempt(c, deps, 'admin', c.req.valid('param').id);
      const { agent, apiKey, rotatedAt } = await rotateAgentCredential(deps, attempt, actorOf(c));
      c.header('Cache-Control', 'no-store');
      return c.json(
        {
          agent_id: agent.id,
          api_key: apiKey,
          rotated_at: rotatedAt,
          message: 'agent credential rotated; the previous key no longer works',
        },
        200,
      );
    },
  );
  return app;
}
