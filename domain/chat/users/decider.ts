// What one chat user does about others: blocks (`chat.blocks-<user uuid>`, one stream per
// blocker) and reports (`chat.report-<uuid>`, one fact each, appended with no decision).

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { BlockEvent } from './events.ts';

export type BlockCommand =
  | { type: 'Block'; user_id: string; blocked_user_id: string; at: string }
  | { type: 'Unblock'; user_id: string; blocked_user_id: string; at: string };

export interface BlockState {
  blocked: Set<string>;
}

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
      if (user_id === blocked_user_id)
        throw new DomainError('invalid', 'cannot_block_self', 'you cannot block yourself');
      return state.blocked.has(blocked_user_id)
        ? []
        : [{ type: 'UserBlocked', data: { user_id, blocked_user_id, at } }];
    }
    return state.blocked.has(blocked_user_id)
      ? [{ type: 'UserUnblocked', data: { user_id, blocked_user_id, at } }]
      : [];
  },
};
