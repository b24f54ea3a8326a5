// Schemas of the update routes (orchestration).

import { z } from '@hono/zod-openapi';
import { orNull } from '../../shared/openapi.ts';

const Problem = z.object({ code: z.string(), message: z.string() });

export const ApplyEventSchema = z
  .object({
    seq: z.int(),
    step: z.string(),
    state: z.string(),
    phase: z.string().nullable(),
    at: z.string(),
    detail: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('UpdateApplyEvent');

export const ApplySchema = z
  .object({
    apply_id: z.string(),
    state: z.string().openapi({
      description:
        'a running state (verifying_manifest … restarting_prior) or succeeded, failed, rolled_back, recovered, frozen',
    }),
    phase: z
      .string()
      .nullable()
      .openapi({ description: 'pre_flight, active_swap, verifying, rollback; null once ended' }),
    outcome: z.string().nullable().openapi({
      description:
        'success, delivery_incomplete, rolled_back or frozen; null while running and after a pre-flight failure',
    }),
    error: z
      .unknown()
      .openapi({ description: 'why it failed; for delivery_incomplete the requirements {id, status, action}' }),
    from_version: z.string().nullable(),
    to_version: z.string().nullable(),
    requested_by: z.string().nullable(),
    started_at: z.string().nullable(),
    ended_at: z.string().nullable(),
  })
  .openapi('UpdateApplySummary');

export const ApplyDetailSchema = ApplySchema.extend({ events: z.array(ApplyEventSchema) }).openapi('UpdateApply');

export const StatusSchema = z
  .object({
    current_version: z.string(),
    channel: z.string().nullable(),
    latest_version: z.string().nullable(),
    update_available: z.boolean(),
    checked_at: z.string().nullable(),
    last_error: Problem.nullable(),
    checks_enabled: z.boolean(),
    background_check: z.boolean(),
    check_interval_secs: z.int().nullable().openapi({
      description: 'the effective interval (values under 900 raised to 900); null when background checks are off',
    }),
    next_check_at: z.string().nullable(),
    sidecar: z.object({
      url: z.string(),
      reachable: z.boolean(),
      version: z.string().nullable(),
      apply_in_progress: z.string().nullable(),
      frozen: z.string().nullable(),
      error: z.string().nullable(),
    }),
    apply: orNull(ApplySchema).openapi({ description: 'the newest apply' }),
    delivery: z.object({
      status: z.enum(['complete', 'incomplete', 'unknown']),
      checked_at: z.string().nullable(),
      apply_id: z.string().nullable(),
      requirements: z.array(
        z.object({ id: z.string(), kind: z.string(), target: z.string(), status: z.string(), action: z.string() }),
      ),
    }),
    maintenance: z.object({ active: z.boolean(), read_only: z.boolean() }),
  })
  .openapi('UpdateStatus');

export const ApplyBody = z.strictObject({ target_version: z.string().min(1).max(128) }).openapi('UpdateApplyRequest');
export const ApplyStarted = z.object({ apply_id: z.string(), state: z.string() }).openapi('UpdateApplyStarted');
export const ApplyParam = z.object({ apply_id: z.string().openapi({ param: { name: 'apply_id', in: 'path' } }) });
