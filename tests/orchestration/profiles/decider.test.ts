// The `orch.agent_profile-<slug>` stream's one decider, given/when/then: the profile's commands and its
// knowledge snippets' (decided with domain/orchestration/knowledge/decisions.ts).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { KnowledgeCommand } from '../../../domain/orchestration/knowledge/decisions.ts';
import { PROFILE_DEFAULTS, changedFields, profileDecider } from '../../../domain/orchestration/profiles/decider.ts';
import type { AgentProfileStreamEvent, ProfileSettings } from '../../../domain/orchestration/profiles/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-01-02T00:00:00.000Z';
const settings: ProfileSettings = { ...PROFILE_DEFAULTS, name: 'Bot', model: 'local' };
const create = { type: 'CreateProfile' as const, profile_id: 'p1', slug: 'bot', settings, by: 'admin', at };
const created: AgentProfileStreamEvent = {
  type: 'ProfileCreated',
  data: {
    profile_id: 'p1',
    slug: 'bot',
    ...settings,
    knowledge_search_enabled: false,
    channel_reply_mode: 'dm_only',
    integrations: {},
    template: null,
    created_by: 'admin',
    at,
  },
};
const snippetAdded = (id: string): AgentProfileStreamEvent => ({
  type: 'KnowledgeSnippetAdded',
  data: {
    snippet_id: id,
    profile_id: 'p1',
    title: 't',
    content: 'c',
    source: null,
    metadata: null,
    added_by: 'admin',
    at,
  },
});

const profile = spec(profileDecider);
const test = suite('domain: profiles and knowledge');

test('CreateProfile on a new stream creates; on an existing one it is slug_taken', () => {
  profile([]).when(create).then([created]);
  profile([created])
    .when({ ...create, profile_id: 'p2' })
    .thenError('slug_taken');
});

test('CreateProfile checks the slug and every range', () => {
  for (const slug of ['', '-a', 'a-', 'A', 'a_b', 'a'.repeat(61)])
    profile([])
      .when({ ...create, slug })
      .thenError('validation_failed');
  for (const bad of [
    { security_tier: 0 },
    { security_tier: 4 },
    { security_tier: 1.5 },
    { cost_cap_daily_cents: -1 },
    { rate_limit_rpm: 0 },
    { rate_limit_rpd: 0 },
    { max_tokens: 0 },
    { max_tokens: 200_001 },
    { temperature: 3 },
    { temperature: Number.NaN },
    { conversation_ttl_hours: 0 },
    { name: ' ' },
  ])
    profile([])
      .when({ ...create, settings: { ...settings, ...bad } })
      .thenError('validation_failed');
});

test('a template instantiation is one decision: the profile, its snippets, then the flag', () => {
  const seed = [
    { snippet_id: 's1', title: 'A', content: 'a', source: 'template:x', metadata: null },
    { snippet_id: 's2', title: 'B', content: 'b', source: null, metadata: null },
  ];
  profile([])
    .when({ ...create, template: { slug: 'x', seed } })
    .then((events) => {
      assert.equal(
        events.map((e) => e.type),
        ['ProfileCreated', 'KnowledgeSnippetAdded', 'KnowledgeSnippetAdded', 'ProfileKnowledgeSearchEnabled'],
      );
      assert.is((events[0]!.data as { template: string }).template, 'x');
    });
  profile([])
    .when({ ...create, template: { slug: 'x', seed: [] } })
    .then((events) =>
      assert.equal(
        events.map((e) => e.type),
        ['ProfileCreated'],
      ),
    );
  profile([])
    .when({ ...create, template: { slug: 'x', seed: [{ ...seed[0]!, title: '' }] } })
    .thenError('validation_failed');
});

test('EnsureProfile creates once and then does nothing', () => {
  const ensure = { type: 'EnsureProfile' as const, profile_id: 'p1', slug: 'bot', settings, by: null, at };
  profile([])
    .when(ensure)
    .then((events) =>
      assert.equal(
        events.map((e) => e.type),
        ['ProfileCreated'],
      ),
    );
  profile([created]).when(ensure).then([]);
});

test('UpdateProfile records only what changes; nothing when nothing changes; 404 before creation', () => {
  profile([created])
    .when({ type: 'UpdateProfile', changes: { name: 'Bot', enabled: false, max_tokens: 1024 }, by: 'admin', at: later })
    .then([
      {
        type: 'ProfileUpdated',
        data: { profile_id: 'p1', changes: { enabled: false }, changed_by: 'admin', at: later },
      },
    ]);
  profile([created])
    .when({ type: 'UpdateProfile', changes: { name: 'Bot' }, by: 'admin', at: later })
    .then([]);
  profile([created]).when({ type: 'UpdateProfile', changes: {}, by: 'admin', at: later }).then([]);
  profile([created])
    .when({ type: 'UpdateProfile', changes: { security_tier: 9 }, by: 'admin', at: later })
    .thenError('validation_failed');
  profile([])
    .when({ type: 'UpdateProfile', changes: { enabled: false }, by: 'admin', at: later })
    .thenError('profile_not_found');
});

test('SetReplyMode: an operator change, nothing when unchanged, refused for an unknown mode', () => {
  profile([created])
    .when({ type: 'SetReplyMode', mode: 'both', by: 'operator-cli', at: later })
    .then([
      {
        type: 'ProfileReplyModeChanged',
        data: { profile_id: 'p1', channel_reply_mode: 'both', changed_by: 'operator-cli', at: later },
      },
    ]);
  profile([created]).when({ type: 'SetReplyMode', mode: 'dm_only', by: null, at: later }).then([]);
  profile([created])
    .when({ type: 'SetReplyMode', mode: 'shout' as never, by: null, at: later })
    .thenError('validation_failed');
  profile([]).when({ type: 'SetReplyMode', mode: 'both', by: null, at: later }).thenError('profile_not_found');
});

test('evolve folds the whole profile, and the snippets apart from it', () => {
  const events: AgentProfileStreamEvent[] = [
    created,
    {
      type: 'ProfileUpdated',
      data: { profile_id: 'p1', changes: { name: 'Renamed', temperature: 0.1 }, changed_by: null, at: later },
    },
    snippetAdded('s1'),
    { type: 'ProfileKnowledgeSearchEnabled', data: { profile_id: 'p1', reason: 'first_snippet', at: later } },
    {
      type: 'ProfileReplyModeChanged',
      data: { profile_id: 'p1', channel_reply_mode: 'channel_mention', changed_by: null, at: later },
    },
  ];
  const state = events.reduce(profileDecider.evolve, profileDecider.initialState());
  assert.equal(state.profile, {
    id: 'p1',
    slug: 'bot',
    ...settings,
    name: 'Renamed',
    temperature: 0.1,
    knowledge_search_enabled: true,
    channel_reply_mode: 'channel_mention',
    integrations: {},
    created_at: at,
    updated_at: later,
  });
  assert.equal(state.knowledge, { had_snippets: true, snippets: new Set(['s1']) });
  assert.equal(
    events.map(changedFields).map((f) => f && f.length),
    [19, 2, null, 1, 1],
  );
});

test('AddSnippet: the first one turns knowledge search on in the same decision; later ones do not', () => {
  const add: KnowledgeCommand = {
    type: 'AddSnippet',
    snippet_id: 's1',
    title: 'T',
    content: 'C',
    source: null,
    metadata: null,
    by: 'admin',
    at,
  };
  profile([created])
    .when(add)
    .then((events) =>
      assert.equal(
        events.map((e) => e.type),
        ['KnowledgeSnippetAdded', 'ProfileKnowledgeSearchEnabled'],
      ),
    );
  profile([created, snippetAdded('s0')])
    .when(add)
    .then((events) =>
      assert.equal(
        events.map((e) => e.type),
        ['KnowledgeSnippetAdded'],
      ),
    );
  // Turned off by an admin after the first snippet: it stays off.
  const off: AgentProfileStreamEvent = {
    type: 'ProfileUpdated',
    data: { profile_id: 'p1', changes: { knowledge_search_enabled: false }, changed_by: null, at },
  };
  profile([created, snippetAdded('s0'), off])
    .when(add)
    .then((events) =>
      assert.equal(
        events.map((e) => e.type),
        ['KnowledgeSnippetAdded'],
      ),
    );
  // Already on (set by an admin before any snippet): no second flag event.
  const on: AgentProfileStreamEvent = {
    type: 'ProfileUpdated',
    data: { profile_id: 'p1', changes: { knowledge_search_enabled: true }, changed_by: null, at },
  };
  profile([created, on])
    .when(add)
    .then((events) =>
      assert.equal(
        events.map((e) => e.type),
        ['KnowledgeSnippetAdded'],
      ),
    );
  profile([]).when(add).thenError('profile_not_found');
  profile([created])
    .when({ ...add, title: 'x'.repeat(201) })
    .thenError('validation_failed');
  profile([created])
    .when({ ...add, title: '😀'.repeat(200) })
    .then((events) => assert.is(events.length, 2));
  profile([created])
    .when({ ...add, content: '' })
    .thenError('validation_failed');
  profile([created, snippetAdded('s1')])
    .when(add)
    .thenError('snippet_exists');
});

test('UpdateSnippet and DeleteSnippet need the snippet to exist on this profile', () => {
  const deleted: AgentProfileStreamEvent = {
    type: 'KnowledgeSnippetDeleted',
    data: { snippet_id: 's1', profile_id: 'p1', deleted_by: null, at },
  };
  profile([created, snippetAdded('s1')])
    .when({ type: 'UpdateSnippet', snippet_id: 's1', changes: { title: 'New', source: null }, by: 'a', at: later })
    .then([
      {
        type: 'KnowledgeSnippetUpdated',
        data: {
          snippet_id: 's1',
          profile_id: 'p1',
          changes: { title: 'New', source: null },
          updated_by: 'a',
          at: later,
        },
      },
    ]);
  profile([created, snippetAdded('s1')])
    .when({ type: 'UpdateSnippet', snippet_id: 's1', changes: {}, by: 'a', at: later })
    .then([]);
  profile([created, snippetAdded('s1')])
    .when({ type: 'UpdateSnippet', snippet_id: 's1', changes: { content: 'x'.repeat(4001) }, by: 'a', at })
    .thenError('validation_failed');
  profile([created])
    .when({ type: 'UpdateSnippet', snippet_id: 's1', changes: { title: 'x' }, by: 'a', at })
    .thenError('snippet_not_found');
  profile([created, snippetAdded('s1'), deleted])
    .when({ type: 'UpdateSnippet', snippet_id: 's1', changes: { title: 'x' }, by: 'a', at })
    .thenError('snippet_not_found');
  profile([created, snippetAdded('s1')])
    .when({ type: 'DeleteSnippet', snippet_id: 's1', by: 'a', at })
    .then([deleted].map((e) => ({ ...e, data: { ...e.data, deleted_by: 'a' } })) as AgentProfileStreamEvent[]);
  profile([created, snippetAdded('s1'), deleted])
    .when({ type: 'DeleteSnippet', snippet_id: 's1', by: 'a', at })
    .thenError('snippet_not_found');
});

test.run();
