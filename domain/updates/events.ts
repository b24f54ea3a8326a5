// The events of managed updates, on both services.
//
// - `UpdateCheckCompleted` (stream `platform.update_check-<service>`): one per check, verified or not; the
//   last verified envelope is the cached channel head.
// - `UpdateApplyRequested` (stream `platform.update_apply-<apply id>`): the audit entry `update_applied`,
//   written before the sidecar is asked; `UpdateApplyRejected` when the sidecar refused it.
// - `UpdateApplyJournaled`: one per step of the sidecar's journal, appended under the journal
//   entries' own ids when the apply ends (idempotent), so `orchard replay` shows every apply.
// - `MaintenanceStarted` / `MaintenanceEnded` (stream `maintenance`): close and open the write
//   gate of every service's command runner.
// - `UpdateDeliveryChecked` (stream `update_delivery`): the delivery sweep's answer, when it changed.

import { eventTypes, type DomainEvent } from '../shared/decider.ts';
import type { ApplyState } from './apply.ts';

export type UpdateService = 'orch' | 'chat';

export type UpdateEvent =
  | DomainEvent<
      'UpdateCheckCompleted',
      {
        service: UpdateService;
        channel: string;
        host: string;
        checked_at: string;
        /** `verified`, `empty` (the channel has no release: 404) or `failed`. */
        result: 'verified' | 'empty' | 'failed';
        latest_version: string | null;
        /** The verified DSSE envelope as fetched (null unless verified). */
        envelope: Record<string, unknown> | null;
        error: { code: string; message: string } | null;
      }
    >
  | DomainEvent<
      'UpdateApplyRequested',
      {
        /** The audit action name the specs give this entry. */
        action: 'update_applied';
        apply_id: string;
        service: UpdateService;
        target_version: string;
        from_version: string;
        requested_by: string;
        at: string;
      }
    >
  | DomainEvent<'UpdateApplyRejected', { apply_id: string; code: string; at: string }>
  | DomainEvent<
      'UpdateApplyJournaled',
      {
        apply_id: string;
        seq: number;
        step: string;
        state: ApplyState;
        at: string;
        detail: Record<string, unknown>;
      }
    >
  | DomainEvent<'MaintenanceStarted', { apply_id: string; reason: string; at: string }>
  | DomainEvent<'MaintenanceEnded', { apply_id: string; at: string }>
  | DomainEvent<
      'UpdateDeliveryChecked',
      {
        apply_id: string | null;
        to_version: string | null;
        checked_at: string;
        requirements: {
          id: string;
          kind: string;
          target: string;
          status: 'present' | 'missing' | 'unverifiable';
          action: string;
        }[];
      }
    >;

export const UPDATE_EVENT_TYPES = eventTypes<UpdateEvent>()([
  'UpdateCheckCompleted',
  'UpdateApplyRequested',
  'UpdateApplyRejected',
  'UpdateApplyJournaled',
  'MaintenanceStarted',
  'MaintenanceEnded',
  'UpdateDeliveryChecked',
]);

/** Event types the write gate lets through during maintenance: the updater's own bookkeeping. */
export const MAINTENANCE_EXEMPT_TYPES: readonly string[] = [
  'MaintenanceStarted',
  'MaintenanceEnded',
  'UpdateApplyJournaled',
  'UpdateDeliveryChecked',
];
