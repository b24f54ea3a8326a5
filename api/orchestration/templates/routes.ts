// Bot templates (spec: "Bot templates"): list and read the bundled templates (any key), and
// instantiate one into a new profile (admin). Each route also has its web-UI mirror under
// /api/templates, an admin surface (require_admin guards the mount).
//
// Instantiation (commands.ts) is all-or-nothing on both log adapters: a refusal or a failed
// append leaves no profile, no snippet and no reservation, and a retry with the same slug succeeds.

import { createRoute, z } from '@hono/zod-openapi';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { actorOf, requireAdmin, requireKey } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { fields } from '../profiles/schemas.ts';
import { adminArea } from '../auth/admin-area.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';
import { TEMPLATES, templateOf, type BotTemplate } from './catalog.ts';
import { instantiateTemplate } from './commands.ts';

const tags = ['bot templates'];

const TemplateSummary = z
  .object({ slug: z.string(), name: z.string(), description: z.string() })
  .openapi('BotTemplateSummary');
const TemplateDetail = TemplateSummary.extend({
  default_system_prompt: z.string(),
  default_security: z.object({
    security_tier: z.int(),
    cost_cap_daily_cents: z.int(),
    rate_limit_rpm: z.int(),
    rate_limit_rpd: z.int(),
    pii_scrub: z.boolean(),
  }),
  starter_memories: z.array(z.object({ title: z.string(), content: z.string() })),
}).openapi('BotTemplate');

const InstantiateBody = z
  .strictObject({
    slug: fields.slug,
    name: fields.name,
    description: fields.description.optional(),
    system_prompt_override: fields.system_prompt
      .optional()
      .openapi({ description: "falls back to the template's default system prompt" }),
    seed_memories: z
      .boolean()
      .default(true)
      .openapi({ description: "seed the template's starter memories as knowledge snippets (default true)" }),
    security_tier: fields.security_tier.optional(),
    cost_cap_daily_cents: fields.cost_cap_daily_cents.optional(),
    rate_limit_rpm: fields.rate_limit_rpm.optional(),
    rate_limit_rpd: fields.rate_limit_rpd.optional(),
  })
  .openapi('InstantiateTemplateRequest');

const Instantiated = z
  .object({
    agent_profile_id: z.uuid(),
    slug: z.string(),
    seeded_memory_count: z.int(),
  })
  .openapi('InstantiatedTemplate');

const TemplateParam = z.object({
  slug: z.string().openapi({ param: { name: 'slug', in: 'path' }, example: 'customer-support' }),
});

const summary = (t: BotTemplate) => ({ slug: t.slug, name: t.name, description: t.description });

// The mirrors (`/api/templates...`) are in the admin area: require_admin refuses first there.
export function templateRoutes(deps: OrchDeps) {
  const app = orchRouter();

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/templates',
      tags,
      summary: 'The bundled bot templates',
      middleware: requireKey(),
      responses: {
        200: ok(z.array(TemplateSummary), 'each with slug, name and description'),
        ...orchErrors(AUTH_ERRORS),
      },
    }),
    (c) => c.json(TEMPLATES.map(summary), 200),
    { first: adminArea(deps) },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/templates/{slug}',
      tags,
      summary: 'One template, with its starter knowledge memories',
      middleware: requireKey(),
      request: { params: TemplateParam },
      responses: {
        200: ok(TemplateDetail, 'the template'),
        ...orchErrors({ ...AUTH_ERRORS, 404: 'template_not_found' }),
      },
    }),
    (c) => c.json(templateOf(c.req.valid('param').slug), 200),
    { first: adminArea(deps) },
  );

  withWebUiMirror(
    app,
    createRoute({
      method: 'post',
      path: '/api/v1/templates/{slug}/instantiate',
      tags,
      summary: 'Create a profile from a template (all-or-nothing)',
      description:
        'One append holds the profile, its seeded memories and the knowledge-search flag; a refusal or failure leaves nothing behind.',
      middleware: requireAdmin(true),
      request: { params: TemplateParam, body: jsonBody(InstantiateBody) },
      responses: {
        201: ok(Instantiated, 'the new profile'),
        ...orchErrors({
          ...AUTH_ERRORS,
          403: 'admin role required',
          400: 'validation_failed (tier outside 1-3, negative cap, rate limit below 1, unknown fields)',
          404: 'template_not_found',
          409: 'slug_taken',
          413: 'payload_too_large',
        }),
      },
    }),
    async (c) => {
      const { profile, seeded } = await instantiateTemplate(
        deps,
        c.req.valid('param').slug,
        c.req.valid('json'),
        actorOf(c),
      );
      return c.json({ agent_profile_id: profile.id, slug: profile.slug, seeded_memory_count: seeded }, 201);
    },
    { first: adminArea(deps) },
  );

  return app;
}
