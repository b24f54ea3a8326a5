// Read-only rollups, exact, from the read models: summary, trend (month ends from the log's
// history, past months fixed), rollout spread, status, the audit event stream, derived signals.

import { createRoute, z } from '@hono/zod-openapi';
import { CHANNELS, CUSTOMER_STATUSES, PRODUCTS, SUBSCRIPTION_STATUSES } from '../../../domain/registry/catalog.ts';
import { formatPosition, parsePosition, type Position } from '../../../infra/eventstore/position.ts';
import { readCheckpoint } from '../../../infra/processors/projection.ts';
import { AUDITED_TYPES, auditEvents, lastChangeAt } from '../../../projections/registry/audit.ts';
import { registryProjections } from '../../../projections/registry/index.ts';
import {
  registryCounts,
  rolloutCounts,
  SIGNAL_KINDS,
  signals,
  type SignalRow,
} from '../../../projections/registry/rollups.ts';
import { summary } from '../../../projections/registry/summary.ts';
import { monthOf, nextMonth, trendMonths } from '../../../projections/registry/trend.ts';
import { ok } from '../../shared/openapi.ts';
import { clampedInt, page, pageFields, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { LIST_PAGE } from '../customers/routes.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, registryErrors, registryRouter } from '../router.ts';
import { compareVersions } from './versions.ts';

const counts = <K extends string>(keys: readonly K[]) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.number().int()])) as Record<K, z.ZodNumber>);

const Summary = z
  .object({
    customers_total: z.number().int(),
    customers_by_status: counts(CUSTOMER_STATUSES),
    paying_customers: z
      .number()
      .int()
      .openapi({ description: 'live customers with an active subscription of positive MRR' }),
    mrr_cents: z.number().int().openapi({ description: 'sum of mrr_cents over active subscriptions' }),
    arr_cents: z.number().int().openapi({ description: 'mrr_cents × 12' }),
    subscriptions_by_status: counts(SUBSCRIPTION_STATUSES),
    deployments_by_product: counts(PRODUCTS),
    deployments_by_channel: counts(CHANNELS),
  })
  .openapi('RegistrySummary');

const TrendPoint = z
  .object({
    month: z.string().openapi({ example: '2026-01' }),
    month_end: z.string().openapi({
      description: "the instant the figures are as of: the month's last millisecond, or now for the running month",
    }),
    complete: z.boolean().openapi({ description: 'false for the month in progress' }),
    mrr_cents: z.number().int(),
    arr_cents: z.number().int(),
    customers_total: z.number().int(),
    customers_by_status: counts(CUSTOMER_STATUSES),
    new_customers: z.number().int(),
    churned_customers: z.number().int(),
  })
  .openapi('RegistryTrendPoint');
const Trend = z.object({ months: z.array(TrendPoint), as_of: z.string() }).openapi('RegistryTrend');

const Rollout = z
  .object({
    products: z.array(
      z.object({
        product: z.enum(PRODUCTS),
        total: z.number().int(),
        newest_version: z.string().nullable(),
        newest_version_share: z
          .number()
          .openapi({ description: "share of the product's deployments on the newest version, 0 to 1" }),
        versions: z.array(
          z.object({ version: z.string(), count: z.number().int(), share: z.number(), channels: counts(CHANNELS) }),
        ),
        channels: counts(CHANNELS),
      }),
    ),
  })
  .openapi('RegistryRollout');

const Status = z
  .object({
    status: z.enum(['ok', 'degraded']),
    database: z.enum(['ok', 'unreachable']),
    log_head_position: z.string().nullable(),
    projections: z.array(
      z.object({ name: z.string(), checkpoint: z.string().nullable(), lag_events: z.number().int() }),
    ),
    counts: z
      .object({
        customers: z.number().int(),
        deployments: z.number().int(),
        subscriptions: z.number().int(),
        contacts: z.number().int(),
        active_tokens: z.number().int(),
      })
      .nullable(),
    last_change_at: z.string().nullable(),
    version: z.string(),
  })
  .openapi('RegistryStatus');

const AuditEvent = z
  .object({
    position: z
      .string()
      .openapi({ description: "the event's position in the log; pass it as `before` for the next page" }),
    type: z.string(),
    stream: z.string(),
    customer_slug: z.string().nullable(),
    actor: z.object({ kind: z.string(), id: z.string().nullable() }),
    at: z.string(),
    changes: z
      .record(z.string(), z.object({ before: z.unknown(), after: z.unknown() }))
      .nullable()
      .openapi({ description: 'for updates: each changed field before and after' }),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi('RegistryAuditEvent');
const AuditPage = z
  .object({ items: z.array(AuditEvent), next_before: z.string().nullable() })
  .openapi('RegistryAuditPage');
const positionText = z.string().regex(/^\d+\/\d+$/, 'a log position as returned in `position`');
const EventsQuery = z.object({
  limit: clampedInt({ default: 50, max: 200 }),
  before: positionText.optional(),
  customer: z.string().max(63).optional(),
  type: z.enum(AUDITED_TYPES).optional(),
});

const Signal = z
  .object({
    kind: z.enum(SIGNAL_KINDS as [string, ...string[]]),
    customer: z.object({ slug: z.string(), name: z.string() }),
    reason: z.string(),
    subject: z.object({ type: z.enum(['customer', 'deployment', 'subscription']), id: z.uuid() }),
    product: z.string().nullable(),
    since: z.string().nullable(),
  })
  .openapi('RegistrySignal');
const SignalPage = z.object({ items: z.array(Signal), ...pageFields }).openapi('RegistrySignalPage');

function reasonOf(row: SignalRow): string {
  switch (row.kind) {
    case 'at_risk':
      return `${row.product} subscription is past_due`;
    case 'stale_deployment':
      return `${row.product} deployment not seen since ${row.since}`;
    case 'renewal_due':
      return `${row.product} subscription renews on ${row.since}`;
    case 'stale_lead':
      return `lead's next action was due on ${row.since}`;
  }
}

const lastMillisecond = (month: string) => new Date(Date.parse(`${nextMonth(month)}T00:00:00Z`) - 1).toISOString();

function monthsBack(month: string, n: number): string {
  const d = new Date(`${month}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() - n);
  return d.toISOString().slice(0, 10);
}

export function rollupRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const customersRead = access(deps, { scope: 'customers:read' });
  const tags = ['rollups'];

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/summary',
      tags,
      summary: 'Top-line counts and the revenue rollup',
      middleware: [customersRead] as const,
      responses: { 200: ok(Summary, 'the summary'), ...registryErrors(AUTH_ERRORS) },
    }),
    async (c) => c.json(await summary(deps.db), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/summary/trend',
      tags,
      middleware: [customersRead] as const,
      summary:
        "Per month end: MRR, customers by status, new and churned customers, as of each month end from the log's history",
      request: {
        query: z.object({
          months: z.coerce
            .number()
            .int()
            .min(1)
            .max(60)
            .default(12)
            .openapi({ type: 'integer', description: '1-60, default 12' }),
        }),
      },
      responses: {
        200: ok(Trend, 'oldest month first; the last one is the month in progress'),
        ...registryErrors({ ...AUTH_ERRORS, 422: 'months out of range' }),
      },
    }),
    async (c) => {
      const now = deps.clock.now();
      const current = monthOf(now);
      const first = monthsBack(current, c.req.valid('query').months - 1);
      const months = await trendMonths(deps.db, first, current);
      return c.json(
        {
          as_of: now.toISOString(),
          months: months.map((m) => ({
            month: m.month.slice(0, 7),
            month_end: m.month === current ? now.toISOString() : lastMillisecond(m.month),
            complete: m.month !== current,
            mrr_cents: m.mrr_cents,
            arr_cents: m.mrr_cents * 12,
            customers_total: Object.values(m.by_status).reduce((a, b) => a + b, 0),
            customers_by_status: m.by_status,
            new_customers: m.new_customers,
            churned_customers: m.churned_customers,
          })),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/summary/rollout',
      tags,
      summary: 'Per product: deployments per version and per channel, and the share on the newest version',
      middleware: [access(deps, { scope: 'deployments:read' })] as const,
      request: { query: z.object({ product: z.enum(PRODUCTS).optional() }) },
      responses: {
        200: ok(Rollout, 'the rollout spread'),
        ...registryErrors({ ...AUTH_ERRORS, 422: 'unknown product' }),
      },
    }),
    async (c) => {
      const only = c.req.valid('query').product;
      const rows = await rolloutCounts(deps.db, only);
      const zero = () => Object.fromEntries(CHANNELS.map((ch) => [ch, 0])) as Record<(typeof CHANNELS)[number], number>;
      const products = (only ? [only] : [...PRODUCTS]).map((product) => {
        const mine = rows.filter((r) => r.product === product);
        const total = mine.reduce((n, r) => n + r.n, 0);
        const channels = zero();
        const byVersion = new Map<string, { count: number; channels: ReturnType<typeof zero> }>();
        for (const r of mine) {
          channels[r.channel as keyof typeof channels] += r.n;
          const v = byVersion.get(r.version) ?? { count: 0, channels: zero() };
          v.count += r.n;
          v.channels[r.channel as keyof typeof channels] += r.n;
          byVersion.set(r.version, v);
        }
        const versions = [...byVersion.entries()]
          .sort(([a], [b]) => compareVersions(b, a))
          .map(([version, v]) => ({
            version,
            count: v.count,
            share: total ? v.count / total : 0,
            channels: v.channels,
          }));
        return {
          product,
          total,
          newest_version: versions[0]?.version ?? null,
          newest_version_share: versions[0]?.share ?? 0,
          versions,
          channels,
        };
      });
      return c.json({ products }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/status',
      tags,
      summary: "Database reachable, the log's head, projection lag, counts, last change",
      middleware: [customersRead] as const,
      responses: {
        200: ok(Status, 'the status'),
        503: ok(Status, 'the database is unreachable'),
        ...registryErrors(AUTH_ERRORS),
      },
    }),
    async (c) => {
      try {
        const store = deps.commands.store;
        const now = deps.clock.now();
        const [head, projections, tallies, last] = await Promise.all([
          store.headPosition(),
          Promise.all(
            registryProjections.map(async (p) => {
              const checkpoint = await readCheckpoint(deps.db, p.name);
              const lag = await store.countAfter(checkpoint ?? 'start', { eventTypes: [...p.handles] }, 100_000);
              return { name: p.name, checkpoint: checkpoint ? formatPosition(checkpoint) : null, lag_events: lag };
            }),
          ),
          registryCounts(deps.db, now),
          lastChangeAt(deps.db),
        ]);
        return c.json(
          {
            status: 'ok' as const,
            database: 'ok' as const,
            log_head_position: head ? formatPosition(head) : null,
            projections,
            counts: tallies,
            last_change_at: last,
            version: deps.version,
          },
          200,
        );
      } catch (error) {
        deps.log.warn('registry_status_degraded', { error: (error as Error).message });
        return c.json(
          {
            status: 'degraded' as const,
            database: 'unreachable' as const,
            log_head_position: null,
            projections: [],
            counts: null,
            last_change_at: null,
            version: deps.version,
          },
          503,
        );
      }
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/events',
      tags,
      summary: 'Audit event stream (who changed what), newest first',
      middleware: [customersRead] as const,
      request: { query: EventsQuery },
      responses: {
        200: ok(AuditPage, 'a page of events'),
        ...registryErrors({ ...AUTH_ERRORS, 422: 'a malformed before position or an unknown type' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const before: Position | undefined = q.before ? parsePosition(q.before) : undefined;
      const rows = await auditEvents(deps.db, { before, customer: q.customer, type: q.type }, q.limit);
      const items = rows.map((r) => ({
        position: r.position,
        type: r.type,
        stream: r.stream,
        customer_slug: r.customer_slug,
        actor: r.actor,
        at: r.at,
        changes: r.changes,
        data: r.data,
      }));
      return c.json({ items, next_before: items.length === q.limit ? items.at(-1)!.position : null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/signals',
      tags,
      summary: 'Derived signals: at_risk, stale_deployment, renewal_due, stale_lead',
      middleware: [customersRead] as const,
      request: {
        query: pageQuery(LIST_PAGE).extend({ kind: z.enum(SIGNAL_KINDS as [string, ...string[]]).optional() }),
      },
      responses: {
        200: ok(SignalPage, 'a page of signals'),
        ...registryErrors({ ...AUTH_ERRORS, 422: 'unknown kind' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await signals(
        deps.db,
        deps.clock.now(),
        { kind: q.kind as SignalRow['kind'] | undefined },
        q,
      );
      const items = rows.map((r) => ({
        kind: r.kind,
        customer: { slug: r.customer_slug, name: r.customer_name },
        reason: reasonOf(r),
        subject: { type: r.subject_type, id: r.subject_id },
        product: r.product,
        since: r.since,
      }));
      return c.json(page('items', items, total, q), 200);
    },
  );

  return app;
}
