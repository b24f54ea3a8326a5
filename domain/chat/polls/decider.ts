// A poll (`chat.poll-<uuid>`) in a channel: plaintext (the server counts the votes: `encrypted:
// false`), single or multiple choice, optionally anonymous (voter ids are not shown to members;
// the log keeps them, since one vote per member is decided from it). Open until its creator, a
// channel moderator or an instance admin closes it, or `closes_at` passes (the scheduler then
// appends `PollClosed` with reason `expired`; votes after `closes_at` are refused even before).

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { PollOption, PollTally, PollEvent } from './events.ts';

export const QUESTION_MAX = 300;
export const OPTIONS_MIN = 2;
export const OPTIONS_MAX = 20;
export const OPTION_TEXT_MAX = 200;

export type PollCommand =
  | {
      type: 'Create';
      id: string;
      channel_id: string;
      creator_id: string;
      question: string;
      options: PollOption[];
      multiple_choice: boolean;
      anonymous: boolean;
      closes_at: string | null;
      at: string;
    }
  | { type: 'Vote'; user_id: string; option_ids: string[]; at: string }
  /** `allowed`: the actor is the creator, a channel moderator or above, or an instance admin (decided by the caller from the read models). */
  | { type: 'Close'; actor_id: string; allowed: boolean; at: string }
  /** The scheduler, at `closes_at`. */
  | { type: 'Expire'; at: string };

export interface PollState {
  id: string | null;
  channel_id: string;
  creator_id: string;
  option_ids: string[];
  multiple_choice: boolean;
  anonymous: boolean;
  closes_at: string | null;
  closed: boolean;
  votes: Map<string, string[]>;
}

const coded = (kind: ConstructorParameters<typeof DomainError>[0], code: string, message: string) =>
  new DomainError(kind, code, message, { code });
export const pollNotFound = () => coded('not_found', 'poll_not_found', 'no such poll');
const pollClosed = () => coded('conflict', 'poll_closed', 'the poll is closed');

export function tally(votes: Map<string, string[]>, optionIds: string[]): PollTally {
  const counts = Object.fromEntries(optionIds.map((id) => [id, 0]));
  let voters = 0;
  for (const choice of votes.values()) {
    if (choice.length) voters += 1;
    for (const id of choice) counts[id] = (counts[id] ?? 0) + 1;
  }
  return { results: optionIds.map((option_id) => ({ option_id, votes: counts[option_id] ?? 0 })), voters };
}

export const pollDecider: Decider<PollState, PollCommand, PollEvent> = {
  initialState: () => ({
    id: null,
    channel_id: '',
    creator_id: '',
    option_ids: [],
    multiple_choice: false,
    anonymous: false,
    closes_at: null,
    closed: false,
    votes: new Map(),
  }),
  evolve(state, event) {
    switch (event.type) {
      case 'PollCreated': {
        const d = event.data;
        return {
          ...state,
          id: d.poll_id,
          channel_id: d.channel_id,
          creator_id: d.creator_id,
          option_ids: d.options.map((o) => o.option_id),
          multiple_choice: d.multiple_choice,
          anonymous: d.anonymous,
          closes_at: d.closes_at,
        };
      }
      case 'PollVoted': {
        const votes = new Map(state.votes);
        if (event.data.option_ids.length) votes.set(event.data.user_id, event.data.option_ids);
        else votes.delete(event.data.user_id);
        return { ...state, votes };
      }
      case 'PollClosed':
        return { ...state, closed: true };
    }
  },
  decide(command, state) {
    if (command.type === 'Create') {
      if (state.id) throw coded('conflict', 'poll_exists', 'poll already exists');
      const texts = command.options.map((o) => o.text);
      if (command.question.length < 1 || command.question.length > QUESTION_MAX)
        throw coded('invalid', 'validation_failed', `question is 1-${QUESTION_MAX} characters`);
      if (texts.length < OPTIONS_MIN || texts.length > OPTIONS_MAX)
        throw coded('invalid', 'validation_failed', `a poll has ${OPTIONS_MIN}-${OPTIONS_MAX} options`);
      if (new Set(texts).size !== texts.length) throw coded('invalid', 'validation_failed', 'options must be distinct');
      if (command.closes_at && Date.parse(command.closes_at) <= Date.parse(command.at))
        throw coded('invalid', 'validation_failed', 'closes_at must be in the future');
      const { type: _t, id, at, ...rest } = command;
      return [{ type: 'PollCreated', data: { poll_id: id, ...rest, at, encrypted: false } }];
    }
    if (!state.id) throw pollNotFound();
    const base = { poll_id: state.id, channel_id: state.channel_id, at: command.at };
    const expired = state.closes_at !== null && Date.parse(state.closes_at) <= Date.parse(command.at);
    switch (command.type) {
      case 'Vote': {
        if (state.closed || expired) throw pollClosed();
        const choice = [...new Set(command.option_ids)];
        if (choice.length !== command.option_ids.length)
          throw coded('invalid', 'validation_failed', 'option_ids must be distinct');
        if (choice.some((id) => !state.option_ids.includes(id)))
          throw coded('invalid', 'invalid_option', 'not an option of this poll');
        if (!state.multiple_choice && choice.length > 1)
          throw coded('invalid', 'single_choice', 'this poll takes one option');
        const ordered = state.option_ids.filter((id) => choice.includes(id));
        const before = state.votes.get(command.user_id) ?? [];
        if (JSON.stringify(before) === JSON.stringify(ordered)) return [];
        const votes = new Map(state.votes);
        if (ordered.length) votes.set(command.user_id, ordered);
        else votes.delete(command.user_id);
        return [
          {
            type: 'PollVoted',
            data: {
              ...base,
              user_id: command.user_id,
              option_ids: ordered,
              anonymous: state.anonymous,
              ...tally(votes, state.option_ids),
            },
          },
        ];
      }
      case 'Close':
        if (!command.allowed)
          throw coded(
            'forbidden',
            'insufficient_role',
            'only the creator, a channel moderator or an instance admin closes a poll',
          );
        if (state.closed || expired) throw pollClosed();
        return [
          {
            type: 'PollClosed',
            data: {
              ...base,
              closed_by: command.actor_id,
              creator_id: state.creator_id,
              reason: 'closed',
              ...tally(state.votes, state.option_ids),
            },
          },
        ];
      case 'Expire':
        if (state.closed || !expired) return [];
        return [
          {
            type: 'PollClosed',
            data: {
              ...base,
              closed_by: null,
              creator_id: state.creator_id,
              reason: 'expired',
              ...tally(state.votes, state.option_ids),
            },
          },
        ];
    }
  },
};
