// GET /api/v1/cockpit/summary (spec: "Cockpit"), for external dashboards: read from the cockpit
// projection in one query. The cost window is the last 30 UTC days, today included. Mirrored at
// /api/cockpit/summary for the web console's browser sessions.
//
// GET /api/v1/cockpit/cost/daily?days= (our addition, for the console's cost chart): the same
// projection's cost per UTC day over the last `days` days, today included, oldest first, every
// day present (0 without cost). `days` defaults to 30 and is clamped to 1-366; an unreadable
// value is the default (the platform's rule for `limit`).

import { createRoute, z } from '@hono/zod-openapi';
import { clampInt } from '../../shared/pagination.ts';
import { readCockpit, readDailyCost } from '../../../projections/orchestration/cockpit.ts';
import { ok } from '../../shared/openapi.ts';
import { requireKey } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter, withWebUiMirror } from '../router.ts';

const DAY_MS = 86_400_000;
export const COST_WINDOW_DAYS = 30;

const Summary = z
  .object({
    version: z.string().openapi({ description: 'equals the health version' }),
    projects: z.array(
      z.object({
        name: z.string(),
        tasks: z.object({
          open: z.int().openapi({ description: 'backlog + todo' }),
          in_progress: z.int().openapi({ description: 'in_progress + in_review' }),
          done: z.int(),
        }),
      }),
    ),
    agents: z.object({
      configured: z.int().openapi({ description: 'status not completed, failed, killed or stopped' }),
      active: z.int().openapi({ description: 'status running' }),
      max_concurrent: z.int().openapi({ description: "sum of every project's max_concurrent_agents" }),
    }),
    activity: z.object({ last_task_created: z.string().nullable(), last_task_completed: z.string().nullable() }),
    cost: z.object({ window: z.literal('30d'), usd: z.number() }),
  })
  .openapi('CockpitSummary');

const DAILY_MAX_DAYS = 366;

const DailyCost = z
  .object({
    days: z.int().openapi({ description: 'the window in UTC days, today included (after clamping)' }),
    days_clamped: z.boolean().openapi({ description: 'true when `days` was outside 1-366 and was clamped' }),
    series: z
      .array(z.object({ day: z.iso.date(), usd: z.number() }))
      .openapi({ description: 'one entry per day, oldest first' }),
  })
  .openapi('CockpitDailyCost');

/** `days` as asked, or the default when unreadable; then clamped to 1-366. */
function dailyWindow(raw: string | undefined): { days: number; clamped: boolean } {
  const asked = raw !== undefined && /^-?\d+$/.test(raw.trim()) ? Number(raw) : COST_WINDOW_DAYS;
  const days = clampInt(asked, { default: COST_WINDOW_DAYS, max: DAILY_MAX_DAYS });
  return { days, clamped: days !== asked };
}

export function cockpitRoutes(deps: OrchDeps) {
  const app = orchRouter();
  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/cockpit/summary',
      tags: ['cockpit'],
      summary: 'Projects, agents, activity and 30-day cost at a glance',
      middleware: [requireKey()] as const,
      responses: { 200: ok(Summary, 'the summary'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const since = new Date(deps.clock.now().getTime() - (COST_WINDOW_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
      const s = await readCockpit(deps.db, since);
      return c.json(
        {
          version: deps.version,
          projects: s.projects.map((p) => ({
            name: p.name,
            tasks: { open: p.open, in_progress: p.in_progress, done: p.done },
          })),
          agents: { configured: s.agents_configured, active: s.agents_active, max_concurrent: s.max_concurrent },
          activity: {
            last_task_created: s.last_task_created?.toISOString() ?? null,
            last_task_completed: s.last_task_completed?.toISOString() ?? null,
          },
          cost: { window: '30d' as const, usd: Math.round(s.cost_usd * 1e6) / 1e6 },
        },
        200,
      );
    },
  );
  withWebUiMirror(
    app,
    createRoute({
      method: 'get',
      path: '/api/v1/cockpit/cost/daily',
      tags: ['cockpit'],
      summary: 'Agent cost per UTC day, oldest first',
      description:
        "The cockpit projection's cost per UTC day over the last `days` days (default 30, clamped to 1-366), today included; a day without cost is 0.",
      middleware: [requireKey()] as const,
      request: { query: z.object({ days: z.string().optional().openapi({ example: '30' }) }) },
      responses: { 200: ok(DailyCost, 'the daily series'), ...orchErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const { days, clamped } = dailyWindow(c.req.valid('query').days);
      const now = deps.clock.now().getTime();
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const series = await readDailyCost(deps.db, day(now - (days - 1) * DAY_MS), day(now));
      return c.json(
        {
          days,
          days_clamped: clamped,
          series: series.map((d) => ({ day: d.day, usd: Math.round(d.usd * 1e6) / 1e6 })),
        },
        200,
      );
    },
  );
  return app;
}
