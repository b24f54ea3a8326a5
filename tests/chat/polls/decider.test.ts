// The poll decider (`chat.poll-<uuid>`), given/when/then: create with its checks, votes that
// replace the member's last choice with the tally after it, close by an allowed member, expiry.

import { suite } from 'uvu';
import { OPTIONS_MAX, pollDecider } from '../../../domain/chat/polls/decider.ts';
import type { PollEvent } from '../../../domain/chat/polls/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const closesAt = '2026-01-02T00:00:00.000Z';
const options = [
  { option_id: 'a', text: 'A' },
  { option_id: 'b', text: 'B' },
];
const create = {
  type: 'Create' as const,
  id: 'p1',
  channel_id: 'c1',
  creator_id: 'u1',
  question: 'Lunch?',
  options,
  multiple_choice: false,
  anonymous: false,
  closes_at: closesAt,
  at,
};
const base = { poll_id: 'p1', channel_id: 'c1', at };
const created: PollEvent = {
  type: 'PollCreated',
  data: {
    ...base,
    creator_id: 'u1',
    question: 'Lunch?',
    options,
    multiple_choice: false,
    anonymous: false,
    closes_at: closesAt,
    encrypted: false,
  },
};
const voted = (user_id: string, option_ids: string[], results: [number, number], voters: number): PollEvent => ({
  type: 'PollVoted',
  data: {
    ...base,
    user_id,
    option_ids,
    anonymous: false,
    results: [
      { option_id: 'a', votes: results[0] },
      { option_id: 'b', votes: results[1] },
    ],
    voters,
  },
});
const poll = spec(pollDecider);
const test = suite('domain: chat polls');

test('Create: a valid poll; poll_exists again; validation_failed for a bad question, option count, duplicates or a past closes_at', () => {
  poll([]).when(create).then([created]);
  poll([created]).when(create).thenError('poll_exists');
  poll([])
    .when({ ...create, question: '' })
    .thenError('validation_failed');
  poll([])
    .when({ ...create, options: [options[0]!] })
    .thenError('validation_failed');
  poll([])
    .when({
      ...create,
      options: Array.from({ length: OPTIONS_MAX + 1 }, (_, i) => ({ option_id: `o${i}`, text: `${i}` })),
    })
    .thenError('validation_failed');
  poll([])
    .when({ ...create, options: [options[0]!, { option_id: 'b', text: 'A' }] })
    .thenError('validation_failed');
  poll([])
    .when({ ...create, closes_at: at })
    .thenError('validation_failed');
  poll([])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['a'], at })
    .thenError('poll_not_found');
});

test('Vote: records the choice with the tally; a change replaces it; [] withdraws; the same choice again appends nothing', () => {
  poll([created])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['a'], at })
    .then([voted('u2', ['a'], [1, 0], 1)]);
  poll([created, voted('u2', ['a'], [1, 0], 1)])
    .when({ type: 'Vote', user_id: 'u3', option_ids: ['a'], at })
    .then([voted('u3', ['a'], [2, 0], 2)]);
  poll([created, voted('u2', ['a'], [1, 0], 1)])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['b'], at })
    .then([voted('u2', ['b'], [0, 1], 1)]);
  poll([created, voted('u2', ['a'], [1, 0], 1)])
    .when({ type: 'Vote', user_id: 'u2', option_ids: [], at })
    .then([voted('u2', [], [0, 0], 0)]);
  poll([created, voted('u2', ['a'], [1, 0], 1)])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['a'], at })
    .then([]);
});

test('Vote is refused for an unknown option, several on a single-choice poll, duplicates, and once closed or expired', () => {
  poll([created])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['z'], at })
    .thenError('invalid_option');
  poll([created])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['a', 'b'], at })
    .thenError('single_choice');
  poll([created])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['a', 'a'], at })
    .thenError('validation_failed');
  poll([created])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['a'], at: closesAt })
    .thenError('poll_closed');
  const closed: PollEvent = {
    type: 'PollClosed',
    data: {
      ...base,
      closed_by: 'u1',
      creator_id: 'u1',
      reason: 'closed',
      results: [
        { option_id: 'a', votes: 0 },
        { option_id: 'b', votes: 0 },
      ],
      voters: 0,
    },
  };
  poll([created, closed])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['a'], at })
    .thenError('poll_closed');
  // A multiple-choice poll takes several, in the poll's order.
  poll([{ ...created, data: { ...created.data, multiple_choice: true } } as PollEvent])
    .when({ type: 'Vote', user_id: 'u2', option_ids: ['b', 'a'], at })
    .then([voted('u2', ['a', 'b'], [1, 1], 1)]);
});

test('Close: by an allowed member, with the final tally, once; insufficient_role otherwise. Expire: only past closes_at, once', () => {
  const tally = {
    results: [
      { option_id: 'a', votes: 1 },
      { option_id: 'b', votes: 0 },
    ],
    voters: 1,
  };
  const history = [created, voted('u2', ['a'], [1, 0], 1)];
  const closed: PollEvent = {
    type: 'PollClosed',
    data: { ...base, closed_by: 'u1', creator_id: 'u1', reason: 'closed', ...tally },
  };
  poll(history).when({ type: 'Close', actor_id: 'u1', allowed: true, at }).then([closed]);
  poll(history).when({ type: 'Close', actor_id: 'u2', allowed: false, at }).thenError('insufficient_role');
  poll([...history, closed])
    .when({ type: 'Close', actor_id: 'u1', allowed: true, at })
    .thenError('poll_closed');
  poll(history).when({ type: 'Expire', at }).then([]);
  const expired: PollEvent = {
    type: 'PollClosed',
    data: { ...base, at: closesAt, closed_by: null, creator_id: 'u1', reason: 'expired', ...tally },
  };
  poll(history).when({ type: 'Expire', at: closesAt }).then([expired]);
  poll([...history, expired])
    .when({ type: 'Expire', at: closesAt })
    .then([]);
});

test.run();
