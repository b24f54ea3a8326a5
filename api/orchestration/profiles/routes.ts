// The profile routes (spec: "Profiles, usage, audit, conversations"), admin only: list, read
// (now, or `?as_of=` an earlier instant folded from the profile's stream), create, partial
// update, and the change history auditors read from the log. No delete route exists; `enabled`
// false keeps the history. The admin check is the route's own, whatever ORCH_ENFORCE_ADMIN_ROLE
// says (the spec lists profile reads and writes among the role checks beside require_admin).
// Each route has its web-UI mirror under /api/agent-chat/profiles (browser sessions).

import { createRoute, z } from '@hono/zod-openapi';
import { listProfiles } from '../../../projections/orchestration/profiles.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireAdmin } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { AsOfQuery, CreateProfileBody, HistoryEntry, Profile, SlugParam, UpdateProfileBody } from './schemas.ts';
import { createProfile, newSettings, profileOf, profileView, updateProfile } from './commands.ts';
import { profileAsOf, profileHistory } from './history.ts';

const tags = ['profiles'];
const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'admin role required' };
const adminOnly = () => requireAdmin(true);

export function profileRoutes(deps: OrchDeps) {
  const app = orchRouter();

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agent-chat/profiles',
      tags,
      summary: 'Every profile, every column flattened, plus integrations',
      middleware: adminOnly(),
      responses: { 200: ok(z.array(Profile), 'a bare array of profiles'), ...orchErrors(ADMIN_ERRORS) },
    }),
    async (c) => c.json((await listProfiles(deps.db)).map(profileView), 200),
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/agent-chat/profiles',
      tags,
      summary: 'Create a profile',
      description: "Accepts exactly the spec's create fields; fields not sent take the documented defaults.",
      middleware: adminOnly(),
      request: { body: jsonBody(CreateProfileBody) },
      responses: {
        201: ok(Profile, 'the new profile, id included'),
        ...orchErrors({
          ...ADMIN_ERRORS,
          400: 'validation_failed (an unknown field is named)',
          409: 'slug_taken',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const { slug, ...sent } = c.req.valid('json');
      const profile = await createProfile(deps, { slug, settings: newSettings(deps, sent) }, actorOf(c));
      return c.json(profileView(profile), 201);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agent-chat/profiles/{slug}',
      tags,
      summary: 'One profile, now or as it was at an instant',
      middleware: adminOnly(),
      request: { params: SlugParam, query: AsOfQuery },
      responses: {
        200: ok(Profile, 'the profile'),
        ...orchErrors({
          ...ADMIN_ERRORS,
          400: 'validation_failed (as_of is not an RFC 3339 instant)',
          404: 'profile_not_found (also before it existed, with as_of)',
        }),
      },
    }),
    async (c) => {
      const { slug } = c.req.valid('param');
      const { as_of: asOf } = c.req.valid('query');
      if (asOf !== undefined) return c.json(await profileAsOf(deps, slug, new Date(asOf)), 200);
      return c.json(profileView(await profileOf(deps, slug)), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'put',
      path: '/api/v1/agent-chat/profiles/{slug}',
      tags,
      summary: 'Change a profile (only the fields sent)',
      description:
        'A partial update: only sent fields change, and a request that changes nothing appends nothing. `slug` cannot be renamed and `channel_reply_mode` is set by an operator (400).',
      middleware: adminOnly(),
      request: { params: SlugParam, body: jsonBody(UpdateProfileBody) },
      responses: {
        200: ok(Profile, 'the profile as changed'),
        ...orchErrors({
          ...ADMIN_ERRORS,
          400: 'validation_failed (unknown fields, slug, channel_reply_mode)',
          404: 'profile_not_found',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const { slug } = c.req.valid('param');
      const { slug: _slug, channel_reply_mode: _mode, ...changes } = c.req.valid('json');
      return c.json(profileView(await updateProfile(deps, slug, changes, actorOf(c))), 200);
    },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/agent-chat/profiles/{slug}/history',
      tags,
      summary: 'Every change of a profile, oldest first, from its stream',
      description:
        "Read from the profile's stream in the log, not from a read model. The profile's knowledge events are not profile changes and are left out.",
      middleware: adminOnly(),
      request: { params: SlugParam },
      responses: {
        200: ok(z.array(HistoryEntry), 'the changes, oldest first'),
        ...orchErrors({ ...ADMIN_ERRORS, 404: 'profile_not_found' }),
      },
    }),
    async (c) => c.json(await profileHistory(deps, c.req.valid('param').slug), 200),
  );

  return app;
}
