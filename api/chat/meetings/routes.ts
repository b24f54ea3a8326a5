// Meetings: POST/GET /api/channels/{id}/meetings, GET|PATCH|DELETE /api/meetings/{id},
// DELETE /api/meetings/{id}/occurrences/{occurrence_id}, PUT /api/meetings/{id}/rsvp,
// GET /api/meetings/{id}/rsvps. Readers: the channel's members. Writes: the creator, a channel
// moderator and above, or an instance admin. The .ics routes and feed tokens are in ../calendar-feeds/routes.ts.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  DESCRIPTION_MAX,
  DURATION_MAX,
  LOCATION_MAX,
  REMINDER_MAX_MINUTES,
  REMINDERS_MAX,
  TITLE_MAX,
  isOccurrenceOf,
  occurrenceNotFound,
} from '../../../domain/chat/meetings/decider.ts';
import { RSVP_STATUSES } from '../../../domain/chat/meetings/events.ts';
import { occurrencesIn } from '../../../domain/chat/meetings/occurrences.ts';
import {
  meetingExceptions,
  meetingRsvps,
  meetingsOfChannels,
  scheduleOf,
  type MeetingRow,
} from '../../../projections/chat/meetings.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParam, uuidParams } from '../../shared/params.ts';
import { memberChannel } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import { CHANNEL_ERRORS } from '../channels/routes.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import {
  cancelMeeting,
  cancelOccurrence,
  readableMeeting,
  rsvpMeeting,
  scheduleMeeting,
  updateMeeting,
  type Caller,
} from './commands.ts';
import { Meeting, MeetingOccurrence, answersFor, meetingView, occurrenceView } from './views.ts';

const tags = ['meetings'];
const DAY_MS = 86_400_000;
export const RANGE_MAX_DAYS = 366;
const DEFAULT_RANGE_DAYS = 30;

const IdParam = uuidParams('id');
export const MEETING_ERRORS = {
  ...AUTH_ERRORS,
  403: "not a member of the meeting's channel",
  404: 'no such meeting (`meeting_not_found`)',
};
const WRITE_ERRORS = {
  ...MEETING_ERRORS,
  403: 'neither the creator, a channel moderator nor an instance admin (`insufficient_role`), or not a member',
  409: 'the meeting is cancelled (`meeting_cancelled`)',
};

const title = z.string().trim().min(1).max(TITLE_MAX);
const description = z.string().max(DESCRIPTION_MAX);
const start = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/)
  .openapi({ description: 'local wall-clock time YYYY-MM-DDTHH:mm in time_zone' });
const duration = z.number().int().min(1).max(DURATION_MAX);
const location = z.string().trim().min(1).max(LOCATION_MAX).nullable();
const reminders = z
  .array(z.number().int().min(1).max(REMINDER_MAX_MINUTES))
  .max(REMINDERS_MAX)
  .openapi({ description: 'minutes before each occurrence' });
const rrule = z
  .string()
  .min(1)
  .max(1000)
  .nullable()
  .openapi({ description: 'RFC 5545 RRULE, FREQ DAILY to YEARLY (else 400 `unsupported_rrule`)' });

export function meetingRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const me = (c: Context<ChatEnv>) => c.get('chatUser').user_id;
  const now = () => deps.clock.now();

  const caller = (c: Context<ChatEnv>): Caller => {
    const user = c.get('chatUser');
    return { user_id: user.user_id, instance_admin: user.is_admin || user.is_owner };
  };
  const readable = (c: Context<ChatEnv>, id: string) => readableMeeting(deps.db, id, caller(c));
  const view = async (row: MeetingRow) =>
    meetingView(row, scheduleOf(row, await meetingExceptions(deps.db, [row.id])), now());

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/meetings',
      tags,
      summary: 'Schedule a meeting in a channel (members)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              title,
              description: description.default(''),
              start,
              time_zone: z.string().min(1).max(64).openapi({ description: 'IANA time zone' }),
              duration_minutes: duration.default(30),
              rrule: rrule.optional(),
              reminders: reminders.default([10]),
              location: location.optional(),
            })
            .openapi('CreateMeeting'),
        ),
      },
      responses: {
        201: ok(Meeting, 'scheduled'),
        ...chatErrors({ ...CHANNEL_ERRORS, 400: 'validation error; `unsupported_rrule`', 413: 'body too large' }),
      },
    }),
    async (c) => {
      const row = await scheduleMeeting(
        deps,
        { channel_id: c.req.valid('param').id, user_id: me(c), ...c.req.valid('json') },
        actorOf(c),
      );
      return c.json(await view(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/meetings',
      tags,
      summary: `A channel's meeting occurrences in [from, to) (members; at most ${RANGE_MAX_DAYS} days; default the next ${DEFAULT_RANGE_DAYS})`,
      middleware: [auth] as const,
      request: {
        params: IdParam,
        query: z.object({
          from: z.iso.datetime({ offset: true }).optional(),
          to: z.iso.datetime({ offset: true }).optional(),
        }),
      },
      responses: {
        200: ok(
          z
            .object({
              from: z.iso.datetime(),
              to: z.iso.datetime(),
              meetings: z.array(Meeting),
              occurrences: z.array(MeetingOccurrence),
            })
            .openapi('MeetingOccurrences'),
          'occurrences by start',
        ),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: `to before from, or a range over ${RANGE_MAX_DAYS} days (\`range_too_long\`)`,
        }),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, me(c));
      const q = c.req.valid('query');
      const from = q.from ? new Date(q.from) : now();
      const to = q.to ? new Date(q.to) : new Date(from.getTime() + DEFAULT_RANGE_DAYS * DAY_MS);
      if (to.getTime() <= from.getTime())
        throw new ApiError(400, 'validation_failed', 'to must be after from', { code: 'validation_failed' });
      if (to.getTime() - from.getTime() > RANGE_MAX_DAYS * DAY_MS)
        throw new ApiError(400, 'range_too_long', `at most ${RANGE_MAX_DAYS} days`, { code: 'range_too_long' });
      const rows = await meetingsOfChannels(deps.db, [access.channel.id], false);
      const ids = rows.map((r) => r.id);
      const [exceptions, rsvps] = await Promise.all([meetingExceptions(deps.db, ids), meetingRsvps(deps.db, ids)]);
      const occurrences = rows
        .flatMap((r) =>
          occurrencesIn(scheduleOf(r, exceptions), from, to).map((o) => occurrenceView(r.id, o, rsvps, me(c))),
        )
        .sort((a, b) => a.start.localeCompare(b.start) || a.meeting_id.localeCompare(b.meeting_id));
      return c.json(
        {
          from: from.toISOString(),
          to: to.toISOString(),
          meetings: rows.map((r) => meetingView(r, scheduleOf(r, exceptions), now())),
          occurrences,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/meetings/{id}',
      tags,
      summary: 'One meeting (members of its channel)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: { 200: ok(Meeting, 'the meeting'), ...chatErrors(MEETING_ERRORS) },
    }),
    async (c) => {
      const { row } = await readable(c, c.req.valid('param').id);
      return c.json(await view(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/meetings/{id}',
      tags,
      summary:
        'Change a meeting: `scope` `series` (default) changes every occurrence; `occurrence` (with `occurrence_id`) changes that one only (title, description, start, duration_minutes, location)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({
              scope: z.enum(['series', 'occurrence']).default('series'),
              occurrence_id: z.string().max(32).optional(),
              title: title.optional(),
              description: description.optional(),
              start: start.optional(),
              time_zone: z.string().min(1).max(64).optional(),
              duration_minutes: duration.optional(),
              rrule: rrule.optional(),
              reminders: reminders.optional(),
              location: location.optional(),
            })
            .openapi('UpdateMeeting'),
        ),
      },
      responses: {
        200: ok(Meeting, 'the meeting after the change'),
        ...chatErrors({
          ...WRITE_ERRORS,
          400: 'validation error; `unsupported_rrule`; a series-only field with scope occurrence',
          404: 'no such meeting or occurrence (`occurrence_not_found`)',
          409: 'the meeting or occurrence is cancelled',
        }),
      },
    }),
    async (c) => {
      const { scope, occurrence_id, ...changes } = c.req.valid('json');
      const row = await updateMeeting(
        deps,
        { ...caller(c), meeting_id: c.req.valid('param').id, scope, occurrence_id, changes },
        actorOf(c),
      );
      return c.json(await view(row), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/meetings/{id}',
      tags,
      summary: 'Cancel a meeting (every occurrence; calendars see STATUS:CANCELLED)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: { 204: { description: 'cancelled' }, ...chatErrors(WRITE_ERRORS) },
    }),
    async (c) => {
      await cancelMeeting(deps, { ...caller(c), meeting_id: c.req.valid('param').id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/meetings/{id}/occurrences/{occurrence_id}',
      tags,
      summary: 'Cancel one occurrence (an EXDATE in calendars)',
      middleware: [auth] as const,
      // An occurrence id is its original start (`20260105T090000Z`), not a UUID.
      request: {
        params: z.object({
          id: uuidParam('id'),
          occurrence_id: z
            .string()
            .max(32)
            .openapi({
              param: { name: 'occurrence_id', in: 'path' },
              description: "the occurrence's original start, as in the meeting's occurrences",
            }),
        }),
      },
      responses: {
        204: { description: 'cancelled' },
        ...chatErrors({
          ...WRITE_ERRORS,
          404: 'no such meeting or occurrence',
          409: 'the meeting or occurrence is cancelled already',
        }),
      },
    }),
    async (c) => {
      const p = c.req.valid('param');
      await cancelOccurrence(deps, { ...caller(c), meeting_id: p.id, occurrence_id: p.occurrence_id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  const Rsvp = z.object({
    user_id: z.uuid(),
    status: z.enum(RSVP_STATUSES),
    scope: z.enum(['series', 'occurrence']),
    updated_at: z.iso.datetime(),
  });
  const Rsvps = z
    .object({
      meeting_id: z.uuid(),
      occurrence_id: z.string().nullable(),
      rsvps: z.array(Rsvp),
      counts: z.object({ going: z.number(), maybe: z.number(), declined: z.number() }),
    })
    .openapi('MeetingRsvps');
  const rsvpsView = async (meetingId: string, occurrenceId: string | null) => {
    const rows = await meetingRsvps(deps.db, [meetingId]);
    const answers = occurrenceId
      ? answersFor(rows, meetingId, occurrenceId)
      : answersFor(
          rows.filter((r) => r.occurrence_id === ''),
          meetingId,
          '\u0000',
        );
    const rsvps = [...answers].map(([user_id, a]) => ({
      user_id,
      status: a.status,
      scope: a.scope,
      updated_at: a.updated_at.toISOString(),
    }));
    const counts = { going: 0, maybe: 0, declined: 0 };
    for (const r of rsvps) counts[r.status] += 1;
    return { meeting_id: meetingId, occurrence_id: occurrenceId, rsvps, counts };
  };

  app.openapi(
    createRoute({
      method: 'put',
      path: '/api/meetings/{id}/rsvp',
      tags,
      summary: 'Answer for the series, or for one occurrence (which beats the series answer there)',
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(
          z
            .strictObject({ status: z.enum(RSVP_STATUSES), occurrence_id: z.string().max(32).nullable().optional() })
            .openapi('MeetingRsvp'),
        ),
      },
      responses: {
        200: ok(Rsvps, 'the answers for what was answered'),
        ...chatErrors({
          ...MEETING_ERRORS,
          400: 'validation error',
          404: 'no such meeting or occurrence',
          409: 'the meeting or occurrence is cancelled',
        }),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const row = await rsvpMeeting(
        deps,
        { ...caller(c), meeting_id: c.req.valid('param').id, status: b.status, occurrence_id: b.occurrence_id ?? null },
        actorOf(c),
      );
      return c.json(await rsvpsView(row.id, b.occurrence_id ?? null), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/meetings/{id}/rsvps',
      tags,
      summary: 'The answers: for the series, or (with occurrence_id) as they stand for that occurrence',
      middleware: [auth] as const,
      request: { params: IdParam, query: z.object({ occurrence_id: z.string().max(32).optional() }) },
      responses: {
        200: ok(Rsvps, 'answers, oldest first'),
        ...chatErrors({ ...MEETING_ERRORS, 404: 'no such meeting or occurrence' }),
      },
    }),
    async (c) => {
      const { row } = await readable(c, c.req.valid('param').id);
      const occurrenceId = c.req.valid('query').occurrence_id ?? null;
      if (occurrenceId && !isOccurrenceOf(scheduleOf(row, []), occurrenceId)) throw occurrenceNotFound();
      return c.json(await rsvpsView(row.id, occurrenceId), 200);
    },
  );

  return app;
}
