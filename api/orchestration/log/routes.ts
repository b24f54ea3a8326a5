// The auditors' reads of the raw log (admin; the routes check the role themselves, whatever
// ORCH_ENFORCE_ADMIN_ROLE says, because the log holds every account's personal data):
//
// - `GET /api/v1/admin/events?stream=&type=&from=&until=&limit=`: events in log order, paginated
//   by position: `from` is exclusive (pass the previous page's `next_from`), `until` inclusive (a
//   position, or an RFC 3339 instant compared with each event's time). `stream` is an exact
//   stream name, `category` a declared stream category (`chat.message`: docs/reference/streams.md),
//   `type` an event type; each may repeat.
// - `GET /api/v1/admin/streams/{stream}?as_of=`: the stream's events up to that instant (default:
//   now) and, for an aggregate with a decider (./stream-deciders.ts), the state folded from them.
// - `GET /api/v1/admin/events/proof?position=`: one event checked against the hash chain up to
//   its signed checkpoint (an audit entry's `position` is the one to pass).

import { createRoute, z } from '@hono/zod-openapi';
import { clampedInt } from '../../shared/pagination.ts';
import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { upcast } from '../../../infra/eventstore/upcasters.ts';
import { comparePositions, formatPosition, parsePosition, type Position } from '../../../infra/eventstore/position.ts';
import { proveEvent } from '../../../infra/audit/proof.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { ok } from '../../shared/openapi.ts';
import { requireAdmin } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';
import { AUTH_ERRORS, orchErrors, orchRouter } from '../router.ts';
import { folderFor, stateJson } from './stream-deciders.ts';
import { streamCategoryNamed } from '../../../domain/streams.ts';

const tags = ['audit'];
const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'admin role required' };
export const EVENTS_PAGE = { defaultLimit: 100, maxLimit: 1000 };
const SCAN_PAGE = 1000;

const LogEvent = z
  .object({
    position: z.string().openapi({ example: '1234/56' }),
    stream: z.string(),
    revision: z.string().openapi({ description: "the event's revision in its stream (0 first), as a decimal string" }),
    id: z.string().uuid(),
    type: z.string(),
    data: z.record(z.string(), z.unknown()),
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.string(),
  })
  .openapi('LogEvent');

const EventsPage = z
  .object({
    events: z.array(LogEvent),
    next_from: z.string().nullable().openapi({
      description: 'pass as `from` for the next page; null when the log (or `until`) ended within this one',
    }),
    limit: z.number().int(),
  })
  .openapi('LogEventsPage');

const StreamAsOf = z
  .object({
    stream: z.string(),
    as_of: z.string(),
    events: z.array(LogEvent),
    state: z
      .unknown()
      .openapi({ description: 'the aggregate folded from these events; null for streams without a decider' }),
  })
  .openapi('StreamAsOf');

const EventProof = z
  .object({
    ok: z.boolean(),
    position: z.string(),
    seq: z.string().optional().openapi({ description: "the event's place in the chain (1 first)" }),
    hash: z.string().optional().openapi({ description: 'the chain hash after this event (hex)' }),
    checkpoint: z
      .object({ position: z.string(), at: z.string() })
      .nullable()
      .optional()
      .openapi({ description: 'the signed checkpoint the chain was followed to; null when none signs it yet' }),
    public_key: z
      .string()
      .openapi({ description: 'the Ed25519 key the checkpoint was checked with (`orchard audit public-key`)' }),
    reason: z.string().optional().openapi({ description: 'why the check failed' }),
  })
  .openapi('EventProof');

const many = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
const positionText = z.string().regex(/^-?\d+\/-?\d+$/, 'a log position (commit/prepare)');
const instant = z.iso.datetime({ offset: true });

const EventsQuery = z.object({
  stream: many.openapi({ description: 'exact stream name (repeatable)', type: 'string' }),
  category: many.openapi({
    description:
      'stream category, e.g. `chat.message` (repeatable; the declared ones are in docs/reference/streams.md)',
    type: 'string',
  }),
  type: many.openapi({ description: 'event type (repeatable)', type: 'string' }),
  from: positionText.optional().openapi({ description: 'exclusive: events after this position' }),
  until: z
    .union([positionText, instant])
    .optional()
    .openapi({ description: 'inclusive: a position, or an RFC 3339 instant' }),
  limit: clampedInt({ default: EVENTS_PAGE.defaultLimit, max: EVENTS_PAGE.maxLimit }),
});

export function logEventView(e: RecordedEvent) {
  return {
    position: formatPosition(e.position),
    stream: e.stream,
    revision: e.revision.toString(),
    id: e.id,
    type: e.type,
    data: e.data,
    metadata: e.metadata as Record<string, unknown>,
    created_at: e.created_at.toISOString(),
  };
}

export function logRoutes(deps: OrchDeps) {
  const app = orchRouter();
  const adminOnly = () => requireAdmin(true);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/admin/events',
      tags,
      summary: 'The raw log, in order, paginated by position',
      middleware: adminOnly(),
      request: { query: EventsQuery },
      responses: {
        200: ok(EventsPage, 'a page of events'),
        ...orchErrors({ ...ADMIN_ERRORS, 400: 'validation_failed (from or until unreadable, an unknown category)' }),
      },
    }),
    async (c) => {
      const query = c.req.valid('query');
      const untilPosition =
        query.until !== undefined && /^-?\d+\/-?\d+$/.test(query.until) ? parsePosition(query.until) : null;
      const untilMs = query.until !== undefined && !untilPosition ? new Date(query.until).getTime() : null;
      const streams = new Set(query.stream);
      const categories = query.category.map((name) => {
        const declared = streamCategoryNamed(name);
        if (!declared)
          throw new ApiError(
            400,
            'validation_failed',
            `category: ${name} is not a declared stream category (see docs/reference/streams.md)`,
          );
        return declared;
      });
      if (streams.size && categories.length)
        throw new ApiError(400, 'validation_failed', 'stream and category: give one or the other');
      // Stream names narrow the read to their prefixes in the store; the exact match is checked here.
      const filter = {
        streamPrefixes: streams.size ? query.stream : categories.map((c) => c.prefix),
        eventTypes: query.type,
      };
      const events: RecordedEvent[] = [];
      let after: Position | 'start' = query.from ? parsePosition(query.from) : 'start';
      let next: string | null = null;
      scan: for (;;) {
        const page = await deps.events.readAll({ after, filter, limit: SCAN_PAGE });
        for (const e of page) {
          if (untilPosition && comparePositions(e.position, untilPosition) > 0) break scan;
          after = e.position;
          if (streams.size && !streams.has(e.stream)) continue;
          if (untilMs !== null && e.created_at.getTime() > untilMs) continue;
          events.push(e);
          if (events.length === query.limit) {
            next = formatPosition(e.position);
            break scan;
          }
        }
        if (page.length < SCAN_PAGE) break;
      }
      return c.json({ events: events.map(logEventView), next_from: next, limit: query.limit }, 200);
    },
  );

  // Before /admin/events/{...} routes of any kind: a fixed path.
  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/admin/events/proof',
      tags,
      summary: 'Check one event against the hash chain and its signed checkpoint',
      middleware: adminOnly(),
      request: {
        query: z.object({
          position: positionText.openapi({ description: "the event's log position (an audit entry's `position`)" }),
        }),
      },
      responses: {
        200: ok(EventProof, 'the check: ok, or the reason it fails'),
        ...orchErrors({ ...ADMIN_ERRORS, 400: 'validation_failed (position unreadable)' }),
      },
    }),
    async (c) => {
      const { position } = c.req.valid('query');
      const proof = await proveEvent(deps.events, deps.audit.chain, parsePosition(position), deps.audit.publicKeyHex);
      return c.json({ ...proof, public_key: deps.audit.publicKeyHex }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/admin/streams/{stream}',
      tags,
      summary: 'A stream as it was at an instant: its events, and the aggregate folded from them',
      middleware: adminOnly(),
      request: {
        params: z.object({ stream: z.string().min(1).max(500) }),
        query: z.object({
          as_of: instant
            .optional()
            .openapi({ description: 'RFC 3339 instant (default: now)', example: '2026-01-01T00:00:00Z' }),
        }),
      },
      responses: {
        200: ok(StreamAsOf, 'the stream then'),
        ...orchErrors({
          ...ADMIN_ERRORS,
          400: 'validation_failed (as_of is not an RFC 3339 instant)',
          404: 'stream_not_found (also when it began after as_of)',
        }),
      },
    }),
    async (c) => {
      const { stream } = c.req.valid('param');
      const { as_of: asOf } = c.req.valid('query');
      const instantMs = asOf ? new Date(asOf).getTime() : deps.clock.now().getTime();
      const events = (await deps.events.readStream(stream)).filter((e) => e.created_at.getTime() <= instantMs);
      // The events as stored; the state from their current shapes, as the command runner folds them.
      if (events.length === 0) throw new ApiError(404, 'stream_not_found', 'no such stream at that instant');
      const folder = folderFor(stream);
      const state = folder
        ? stateJson(events.map(upcast).reduce((s, e) => folder.evolve(s, e), folder.initialState()))
        : null;
      return c.json({ stream, as_of: new Date(instantMs).toISOString(), events: events.map(logEventView), state }, 200);
    },
  );

  return app;
}
