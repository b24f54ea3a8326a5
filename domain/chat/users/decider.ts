// What one chat user does about others: blocks (`chat_blocks-<user uuid>`, one stream per
// blocker) and reports (`chat_report-<uuid>`, one fact each, appended with no decision).

import { DomainError, eventTypes, type Decider, type DomainEvent } from '../../shared/decider.ts';

export type BlockEvent =
  | DomainEvent<'UserBlocked', { user_id: string; blocked_user_id: string; at: string }>
  | DomainEvent<'UserUnblocked', { user_id: string; blocked_user_id: string; at: string }>;

export type ReportTarget = 'user' | 'message';
export type ReportEvent = DomainEvent<'ReportFiled', { report_id: string; reporter_id: string; target_type: ReportTarget; target_id: string; reason: string; at: string }>;

export const BLOCK_EVENT_TYPES = eventTypes<BlockEvent>()(['UserBlocked', 'UserUnblocked']);
export const REPORT_EVENT_TYPES = eventTypes<ReportEvent>()(['ReportFiled']);

export type BlockCommand =
  | { type: 'Block'; user_id: string; blocked_user_id: string; at: string }
  | { type: 'Unblock'; user_id: string; blocked_user_id: string; at: string };

export interface BlockState { blocked: Set<string> }

export const blockDecider: Decider<BlockState, BlockCommand, BlockEvent> = {
  initialState: () => ({ blocked: new Set() }),
  evolve(state, event) {
    const blocked = new Set(state.blocked);
    if (event.type === 'UserBlocked') blocked.add(event.data.blocked_user_id);
    else blocked.delete(event.data.blocked_user_id);
    return { blocked };
  },
  decide(command, state) {
    const { user_id, blocked_user_id, at } = command;
    if (command.type === 'Block') {
      if (user_id === blocked_user_id) throw new DomainError('invalid', 'cannot_block_self', 'you cannot block yourself');
      return state.blocked.has(blocked_user_id) ? [] : [{ type: 'UserBlocked', data: { user_id, blocked_user_id, at } }];
    }
    return state.blocked.has(blocked_user_id) ? [{ type: 'UserUnblocked', data: { user_id, blocked_user_id, at } }] : [];
  },
};

export const blocksStream = (userId: string) => `chat_blocks-${userId}`;
export const reportStream = (reportId: string) => `chat_report-${reportId}`;
