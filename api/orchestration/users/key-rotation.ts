// API-key rotation: only from an interactive browser session that passes a same-origin and a
// CSRF check; any bearer credential is refused. Every attempt, refused or not, is an event and a
// row of `api_key_rotations` (never a key value). The old key is refused once this answers.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { RotationRefusalReason } from '../../../domain/orchestration/users/events.ts';
import { checkedByHandler } from '../../shared/route-policy.ts';
import { ok } from '../../shared/openapi.ts';
import { isUuid } from '../../shared/params.ts';
import { actorOf, roleOf } from '../auth/guards.ts';
import type { OrchEnv } from '../auth/principal.ts';
import { sessionRequestTrusted } from '../auth/session-cookies.ts';
import type { OrchDeps } from '../deps.ts';
import { orchErrors, orchRouter } from '../router.ts';
import { rotateAccountKey, type RotationAttempt } from './commands.ts';
import { Rotation } from './schemas.ts';

const tags = ['accounts and keys'];
const errors = orchErrors({
  401: 'no session',
  403: 'api_key_rotation_requires_interactive_session, api_key_rotation_csrf, api_key_rotation_requires_admin',
  404: 'api_key_rotation_not_found',
  409: 'api_key_rotation_service_principal, api_key_rotation_agent_credential',
});

/**
 * A rotation attempt as a route sees it (account or agent credential): the caller, the target it
 * names (when that is an id at all; on the self route the caller), and the first of the route's
 * own checks that refuses it: a bearer credential, no browser session, a failed same-origin or
 * CSRF check, and (admin route) no admin role. This route checks the role itself, whatever
 * ORCH_ENFORCE_ADMIN_ROLE says: it hands out keys.
 */
export function rotationAttempt(
  c: Context<OrchEnv>,
  deps: Pick<OrchDeps, 'sealKey'>,
  route: 'self' | 'admin',
  requested: string | null,
): RotationAttempt {
  const principal = c.get('principal');
  const caller = principal.kind === 'anonymous' ? null : principal.user.id;
  const targetId = route === 'admin' ? (requested && isUuid(requested) ? requested : null) : caller;
  const bearer =
    c.get('apiKeyPresented') ||
    !!c.req.header('authorization') ||
    (principal.kind !== 'anonymous' && principal.via === 'api_key');
  let refused: RotationRefusalReason | null = null;
  if (bearer) refused = 'api_key_rotation_requires_interactive_session';
  else if (principal.kind !== 'account' || principal.via !== 'session') refused = 'unauthenticated';
  else if (!sessionRequestTrusted(c, deps.sealKey, principal.sessionId)) refused = 'api_key_rotation_csrf';
  else if (route === 'admin' && roleOf(principal) !== 'admin') refused = 'api_key_rotation_requires_admin';
  return { actor_id: caller, actor_kind: principal.kind, route, target_user_id: targetId, refused };
}

export function keyRotationRoutes(deps: OrchDeps) {
  async function rotate(c: Context<OrchEnv>, route: 'self' | 'admin', requested: string | null) {
    const principal = c.get('principal');
    const self = route === 'self' && principal.kind !== 'anonymous' ? principal.user : null;
    const { user, apiKey, rotatedAt } = await rotateAccountKey(
      deps,
      rotationAttempt(c, deps, route, requested),
      self,
      actorOf(c),
    );
    c.header('Cache-Control', 'no-store');
    return c.json(
      {
        user_id: user.id,
        username: user.username,
        api_key: apiKey,
        rotated_at: rotatedAt,
        message: 'API key rotated; the previous key no longer works',
      },
      200,
    );
  }

  const app = orchRouter();
  const selfRoute = createRoute({
    method: 'post',
    path: '/api/v1/me/api-key/rotate',
    tags,
    summary: "Rotate the caller's API key (interactive session only)",
    // rotateAccountKey refuses, and records, every caller but a browser session.
    middleware: [checkedByHandler({ rule: 'session' })],
    responses: { 200: ok(Rotation, 'the new key, shown once (Cache-Control: no-store)'), ...errors },
  });
  const adminRoute = createRoute({
    method: 'post',
    path: '/api/v1/admin/users/{user_id}/api-key/rotate',
    tags,
    summary: "Rotate another account's API key (admin, interactive session only)",
    // The attempt's admin check holds whatever ORCH_ENFORCE_ADMIN_ROLE says: it hands out keys.
    middleware: [checkedByHandler({ rule: 'session' }), checkedByHandler({ rule: 'admin' })],
    // Any value: every refusal is recorded in its order, an id that is not a UUID too (404 api_key_rotation_not_found).
    request: {
      params: z.object({
        user_id: z.string().openapi({ param: { name: 'user_id', in: 'path' }, description: 'the account id' }),
      }),
    },
    responses: { 200: ok(Rotation, 'the new key, shown once (Cache-Control: no-store)'), ...errors },
  });
  const rotateSelf = async (c: Context<OrchEnv>) => rotate(c, 'self', null);
  const rotateOther = async (c: Context<OrchEnv>) => rotate(c, 'admin', c.req.param('user_id') ?? null);
  app.openapi(selfRoute, rotateSelf);
  app.openapi(adminRoute, rotateOther);
  // The web UI's mirrors (/api/me/api-key/rotate, /api/admin/users/{user_id}/api-key/rotate): the
  // same routes, which already serve interactive sessions only. Not through withWebUiMirror: its
  // requireSession would turn a keyed caller away unrecorded; here the rotation
  // refuses it (403 api_key_rotation_requires_interactive_session) and records the attempt, as
  // on /api/v1/.
  for (const route of [selfRoute, adminRoute]) {
    const path = `/api/${route.path.slice('/api/v1/'.length)}`;
    app.openapi(
      {
        ...route,
        path,
        tags: [...tags, 'web UI'],
        description: `${route.summary} (web UI mirror of ${route.path}: browser sessions only; every refusal recorded as there)`,
      },
      route === selfRoute ? rotateSelf : rotateOther,
    );
  }
  return app;
}
