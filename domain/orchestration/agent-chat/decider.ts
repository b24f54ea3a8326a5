// Agent-chat conversations: public (a visitor's, identified by the hash of its visitor token),
// private (a key's or signed-in account's, optionally split by `visitor_id`) and the personal
// assistant's (a signed-in account's). One stream per conversation (`orch.agent_conversation-<id>`):
// its first append starts it, and every completed turn is one `ChatTurnCompleted` carrying the
// (scrubbed) user message, the reply, the model, tokens and cost.
//
// Message text sits in the fields `user_message` and `reply` only: personal data, kept apart so
// it can be sealed per subject later. No visitor token is ever here, only its SHA-256.
//
// Expiry: a conversation expires `ttl_hours` after its last turn (each turn moves `expires_at`).
// A turn naming an expired conversation starts a new one (the pipeline decides that from the read
// model; this decider refuses to extend an expired one, so a late racer cannot revive it).

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { ConversationKind, ConversationOwner, ConversationEvent } from './events.ts';

export type TurnData = Omit<
  Extract<ConversationEvent, { type: 'ChatTurnCompleted' }>['data'],
  'conversation_id' | 'profile_id' | 'profile_slug'
>;

export type ConversationCommand = {
  type: 'RecordTurn';
  conversation_id: string;
  profile_id: string;
  profile_slug: string;
  /** Present on the turn that starts the conversation. */
  start: { kind: ConversationKind; owner: ConversationOwner; visitor_id: string | null; follows: string | null } | null;
  turn: TurnData;
};

export interface ConversationState {
  started: boolean;
  profile_id: string | null;
  owner: ConversationOwner | null;
  expires_at: string | null;
}

const initialState = (): ConversationState => ({ started: false, profile_id: null, owner: null, expires_at: null });

function evolve(state: ConversationState, event: ConversationEvent): ConversationState {
  switch (event.type) {
    case 'ConversationStarted':
      return {
        started: true,
        profile_id: event.data.profile_id,
        owner: { kind: event.data.owner_kind, id: event.data.owner_id },
        expires_at: null,
      };
    case 'ChatTurnCompleted':
      return { ...state, expires_at: event.data.expires_at };
  }
}

function decide(command: ConversationCommand, state: ConversationState): ConversationEvent[] {
  const { conversation_id, profile_id, profile_slug, start, turn } = command;
  const events: ConversationEvent[] = [];
  if (start) {
    if (state.started)
      throw new DomainError('conflict', 'conversation_exists', 'this conversation has already started');
    events.push({
      type: 'ConversationStarted',
      data: {
        conversation_id,
        profile_id,
        profile_slug,
        kind: start.kind,
        owner_kind: start.owner.kind,
        owner_id: start.owner.id,
        visitor_id: start.visitor_id,
        follows: start.follows,
        at: turn.at,
      },
    });
  } else {
    if (!state.started) throw new DomainError('not_found', 'conversation_not_found', 'no such conversation');
    if (state.profile_id !== profile_id)
      throw new DomainError(
        'conflict',
        'conversation_of_another_profile',
        'the conversation belongs to another profile',
      );
    if (state.expires_at && Date.parse(turn.at) > Date.parse(state.expires_at))
      throw new DomainError('conflict', 'conversation_expired', 'the conversation has expired');
  }
  events.push({ type: 'ChatTurnCompleted', data: { conversation_id, profile_id, profile_slug, ...turn } });
  return events;
}

export const conversationDecider: Decider<ConversationState, ConversationCommand, ConversationEvent> = {
  initialState,
  evolve,
  decide,
};
