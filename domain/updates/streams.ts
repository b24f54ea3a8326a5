// The stream categories of managed updates, shared by the services (`platform.*`): one table,
// with the id each stream is named by and the event types it carries (see
// domain/shared/streams.ts, and docs/reference/streams.md, generated from it).

import { only, streamCategory } from '../shared/streams.ts';
import { UPDATE_EVENT_TYPES, type UpdateService } from './events.ts';

export const PLATFORM_STREAMS = {
  update_check: streamCategory<[service: UpdateService]>('platform.update_check', {
    id: 'service (`orch` or `chat`)',
    events: only(UPDATE_EVENT_TYPES, 'UpdateCheckCompleted'),
    description: "A service's update checks; the last verified envelope is the cached channel head.",
  }),
  update_apply: streamCategory('platform.update_apply', {
    id: 'apply id',
    events: only(UPDATE_EVENT_TYPES, 'UpdateApplyRequested', 'UpdateApplyRejected'),
    description: 'One requested update (the audit entry `update_applied`), and its rejection by the sidecar.',
  }),
  update_journal: streamCategory('platform.update_journal', {
    id: 'apply id',
    events: only(UPDATE_EVENT_TYPES, 'UpdateApplyJournaled'),
    description: "The sidecar's journal of one apply, step by step.",
  }),
  maintenance: streamCategory('platform.maintenance', {
    id: '`updates`',
    events: only(UPDATE_EVENT_TYPES, 'MaintenanceStarted', 'MaintenanceEnded'),
    description: "Maintenance windows: close and open the write gate of every service's command runner.",
  }),
  update_delivery: streamCategory('platform.update_delivery', {
    id: '`sidecar`',
    events: only(UPDATE_EVENT_TYPES, 'UpdateDeliveryChecked'),
    description: "The delivery sweep's answer, when it changed.",
  }),
} as const;

export const updateCheckStream = PLATFORM_STREAMS.update_check.stream;
export const updateApplyStream = PLATFORM_STREAMS.update_apply.stream;
export const updateJournalStream = PLATFORM_STREAMS.update_journal.stream;
export const MAINTENANCE_STREAM = PLATFORM_STREAMS.maintenance.stream('updates');
export const DELIVERY_STREAM = PLATFORM_STREAMS.update_delivery.stream('sidecar');
