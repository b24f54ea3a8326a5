// Community, group, channel and message decisions, given/when/then, and the posting policy.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { channelDecider, PINS_PER_CHANNEL } from '../../../domain/chat/channels/decider.ts';
import type { ChannelEvent } from '../../../domain/chat/channels/events.ts';
import { channelRank } from '../../../domain/chat/channels/roles.ts';
import { communityDecider } from '../../../domain/chat/communities/decider.ts';
import type { CommunityEvent } from '../../../domain/chat/communities/events.ts';
import { mayGrant } from '../../../domain/chat/communities/roles.ts';
import { groupDecider, GROUPS_PER_COMMUNITY } from '../../../domain/chat/groups/decider.ts';
import type { GroupEvent } from '../../../domain/chat/groups/events.ts';
import { MENTIONS_MAX, messageDecider } from '../../../domain/chat/messages/decider.ts';
import { checkPost, type PostingView } from '../../../domain/chat/messages/policy.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { spec } from '../../support/given-when-then.ts';

const test = suite('chat spaces deciders');
const at = '2026-01-01T00:00:00.000Z';
const C = 'c0000000-0000-4000-8000-000000000000';
const created: CommunityEvent[] = [
  {
    type: 'CommunityCreated',
    data: {
      community_id: C,
      name: 'n',
      description: '',
      theme: null,
      welcome_message: null,
      discoverable: false,
      owner_id: 'o',
      at,
    },
  },
  { type: 'CommunityMemberJoined', data: { community_id: C, user_id: 'o', role: 'owner', invite_id: null, at } },
  { type: 'CommunityMemberJoined', data: { community_id: C, user_id: 'a', role: 'admin', invite_id: null, at } },
  { type: 'CommunityMemberJoined', data: { community_id: C, user_id: 'm', role: 'moderator', invite_id: null, at } },
  { type: 'CommunityMemberJoined', data: { community_id: C, user_id: 'u', role: 'member', invite_id: null, at } },
];
const community = spec(communityDecider);

test('roles: grant rules and outranking', () => {
  assert.ok(mayGrant('owner', 'admin'));
  assert.not.ok(mayGrant('admin', 'admin'));
  assert.ok(mayGrant('admin', 'moderator'));
  assert.not.ok(mayGrant('moderator', 'member'));
  assert.not.ok(mayGrant('owner', 'owner'));
  community(created)
    .when({ type: 'SetRole', actor_id: 'a', user_id: 'u', role: 'moderator', at })
    .then([
      { type: 'CommunityMemberRoleChanged', data: { community_id: C, user_id: 'u', role: 'moderator', by: 'a', at } },
    ]);
  community(created)
    .when({ type: 'SetRole', actor_id: 'a', user_id: 'm', role: 'admin', at })
    .thenError('insufficient_role');
  community(created)
    .when({ type: 'SetRole', actor_id: 'm', user_id: 'u', role: 'moderator', at })
    .thenError('insufficient_role');
  community(created).when({ type: 'Kick', actor_id: 'm', user_id: 'a', at }).thenError('insufficient_role');
  community(created).when({ type: 'Leave', actor_id: 'o', at }).thenError('owner_must_transfer');
  community(created)
    .when({ type: 'Update', actor_id: 'x', changes: { name: 'z' }, at })
    .thenError('not_a_member');
});

test('invites: grants, uses, expiry, bans', () => {
  const invite: CommunityEvent = {
    type: 'CommunityInviteCreated',
    data: {
      community_id: C,
      invite_id: 'i',
      code_hash: 'h',
      code_sealed: 's',
      grants_role: 'moderator',
      max_uses: 1,
      expires_at: '2026-01-02T00:00:00.000Z',
      created_by: 'a',
      at,
    },
  };
  community(created)
    .when({
      type: 'CreateInvite',
      actor_id: 'a',
      invite_id: 'i',
      code_hash: 'h',
      code_sealed: 's',
      grants_role: 'admin',
      max_uses: null,
      expires_at: null,
      at,
    })
    .thenError('insufficient_role');
  community(created)
    .when({
      type: 'CreateInvite',
      actor_id: 'u',
      invite_id: 'i',
      code_hash: 'h',
      code_sealed: 's',
      grants_role: null,
      max_uses: null,
      expires_at: null,
      at,
    })
    .thenError('insufficient_role');
  community([...created, invite])
    .when({ type: 'AcceptInvite', actor_id: 'n', invite_id: 'i', at })
    .then([
      { type: 'CommunityMemberJoined', data: { community_id: C, user_id: 'n', role: 'moderator', invite_id: 'i', at } },
    ]);
  const used: CommunityEvent = {
    type: 'CommunityMemberJoined',
    data: { community_id: C, user_id: 'n', role: 'moderator', invite_id: 'i', at },
  };
  community([...created, invite, used])
    .when({ type: 'AcceptInvite', actor_id: 'p', invite_id: 'i', at })
    .thenError('invite_not_found');
  community([...created, invite])
    .when({ type: 'AcceptInvite', actor_id: 'p', invite_id: 'i', at: '2026-01-03T00:00:00.000Z' })
    .thenError('invite_not_found');
  const banned: CommunityEvent = {
    type: 'CommunityMemberBanned',
    data: { community_id: C, user_id: 'p', reason: null, by: 'o', at },
  };
  community([...created, invite, banned])
    .when({ type: 'AcceptInvite', actor_id: 'p', invite_id: 'i', at })
    .thenError('banned');
});

test('groups: the 200 limit; private groups by invite only', () => {
  const groups = spec(groupDecider);
  const fields = { name: 'g', description: '', visibility: 'private' as const, accent_color: null };
  groups([])
    .when({
      type: 'Create',
      group_id: 'g',
      community_id: C,
      fields,
      existing: GROUPS_PER_COMMUNITY,
      actor_id: 'a',
      community_role: 'admin',
      at,
    })
    .thenError('group_limit');
  groups([])
    .when({
      type: 'Create',
      group_id: 'g',
      community_id: C,
      fields,
      existing: 0,
      actor_id: 'u',
      community_role: 'moderator',
      at,
    })
    .thenError('insufficient_role');
  groups([{ type: 'GroupCreated', data: { group_id: 'g', community_id: C, ...fields, owner_id: 'a', at } }])
    .when({ type: 'Join', actor_id: 'u', community_role: 'member', at })
    .thenError('private_group');
  // A removal that follows from the community: members only, once; an unknown group is group_not_found.
  const made: GroupEvent = {
    type: 'GroupCreated',
    data: { group_id: 'g', community_id: C, ...fields, owner_id: 'a', at },
  };
  const joined: GroupEvent = {
    type: 'GroupMemberJoined',
    data: { group_id: 'g', user_id: 'u', role: 'member', invite_id: null, at },
  };
  const removed: GroupEvent = {
    type: 'GroupMemberDeparted',
    data: { group_id: 'g', user_id: 'u', reason: 'removed', at },
  };
  groups([made, joined]).when({ type: 'Remove', user_id: 'u', at }).then([removed]);
  groups([made, joined, removed]).when({ type: 'Remove', user_id: 'u', at }).then([]);
  groups([]).when({ type: 'Remove', user_id: 'u', at }).thenError('group_not_found');
});

test('channels: ranks, pins limit, DMs are fixed', () => {
  assert.is(channelRank(null, 'admin'), 2);
  assert.is(channelRank('member', 'moderator'), 1);
  assert.is(channelRank(null, 'member'), -1);
  const channels = spec(channelDecider);
  const made: ChannelEvent = {
    type: 'ChannelCreated',
    data: {
      channel_id: 'ch',
      scope: 'group',
      kind: 'text',
      group_id: 'g',
      community_id: C,
      name: 'n',
      description: '',
      owner_id: 'o',
      created_by: 'o',
      member_ids: ['o', 'u'],
      at,
    },
  };
  const pins: ChannelEvent[] = Array.from({ length: PINS_PER_CHANNEL }, (_, i) => ({
    type: 'MessagePinned',
    data: { channel_id: 'ch', message_id: `m${i}`, by: 'o', at },
  }));
  channels([made, ...pins])
    .when({ type: 'Pin', message_id: 'mx', actor_id: 'o', community_role: null, at })
    .thenError('pin_limit');
  channels([made])
    .when({ type: 'Pin', message_id: 'mx', actor_id: 'u', community_role: 'member', at })
    .thenError('insufficient_role');
  channels([made])
    .when({ type: 'Kick', user_id: 'o', target_community_role: null, actor_id: 'u', community_role: 'moderator', at })
    .thenError('insufficient_role');
  channels([made])
    .when({
      type: 'Kick',
      user_id: 'u',
      target_community_role: 'member',
      actor_id: 'x',
      community_role: 'moderator',
      at,
    })
    .then([{ type: 'ChannelMemberDeparted', data: { channel_id: 'ch', user_id: 'u', reason: 'kicked', by: 'x', at } }]);
  const dm: ChannelEvent = {
    type: 'ChannelCreated',
    data: {
      channel_id: 'd',
      scope: 'dm',
      kind: 'text',
      group_id: null,
      community_id: null,
      name: '',
      description: '',
      owner_id: null,
      created_by: 'a',
      member_ids: ['a', 'b'],
      at,
    },
  };
  channels([dm])
    .when({
      type: 'Create',
      channel_id: 'd',
      scope: 'dm',
      kind: 'text',
      group_id: null,
      community_id: null,
      name: '',
      description: '',
      member_ids: ['a'],
      existing: 0,
      actor_id: 'b',
      community_role: null,
      at,
    })
    .then([]);
  channels([dm]).when({ type: 'Leave', actor_id: 'a', community_role: null, at }).thenError('dm_fixed');
  // A removal that follows from the community or group: members only, once.
  const removed: ChannelEvent = {
    type: 'ChannelMemberDeparted',
    data: { channel_id: 'ch', user_id: 'u', reason: 'removed', by: 'system', at },
  };
  channels([made]).when({ type: 'Remove', user_id: 'u', by: 'system', at }).then([removed]);
  channels([made, removed]).when({ type: 'Remove', user_id: 'u', by: 'system', at }).then([]);
  channels([]).when({ type: 'Remove', user_id: 'u', by: 'system', at }).thenError('channel_not_found');
});

test('messages: mentions capped at 50; edits by the sender; deletes by sender or moderator', () => {
  const messages = spec(messageDecider);
  const mentions = Array.from({ length: 60 }, (_, i) => `u${i}`);
  messages([])
    .when({
      type: 'Post',
      message_id: 'm',
      channel_id: 'ch',
      sender_id: 's',
      ciphertext: 'x',
      kind: 'text',
      thread_root_id: null,
      mentions,
      via_webhook: false,
      has_file: false,
      at,
    })
    .then((events) => assert.is((events[0]!.data as { mentions: string[] }).mentions.length, MENTIONS_MAX));
  const posted = {
    type: 'MessagePosted' as const,
    data: {
      message_id: 'm',
      channel_id: 'ch',
      sender_id: 's',
      ciphertext: 'x',
      kind: 'text' as const,
      thread_root_id: null,
      mentions: [],
      via_webhook: false,
      has_file: false,
      at,
    },
  };
  messages([posted]).when({ type: 'Edit', actor_id: 'o', ciphertext: 'y', at }).thenError('not_sender');
  messages([posted]).when({ type: 'Delete', actor_id: 'o', moderator: false, at }).thenError('insufficient_role');
  messages([posted])
    .when({ type: 'Delete', actor_id: 'o', moderator: true, at })
    .then([{ type: 'MessageDeleted', data: { message_id: 'm', channel_id: 'ch', by: 'o', sender_id: 's', at } }]);
});

test('posting policy: archived, read-only, timed out, slow mode', () => {
  const base: PostingView = {
    member: true,
    rank: 0,
    archived: false,
    read_only: false,
    slow_mode_secs: 0,
    timed_out_until: null,
    last_posted_at: null,
  };
  const now = new Date(at);
  const refusal = (view: Partial<PostingView>) => {
    try {
      checkPost({ ...base, ...view }, now);
      return null;
    } catch (error) {
      return (error as DomainError).code;
    }
  };
  assert.is(refusal({}), null);
  assert.is(refusal({ member: false }), 'not_a_member');
  assert.is(refusal({ archived: true, rank: 2 }), 'archived');
  assert.is(refusal({ read_only: true }), 'read_only');
  assert.is(refusal({ read_only: true, rank: 1 }), null);
  assert.is(refusal({ timed_out_until: new Date(now.getTime() + 1) }), 'timed_out');
  assert.is(refusal({ timed_out_until: now }), null);
  assert.is(refusal({ slow_mode_secs: 10, last_posted_at: new Date(now.getTime() - 9_000) }), 'slow_mode');
  assert.is(refusal({ slow_mode_secs: 10, last_posted_at: new Date(now.getTime() - 10_000) }), null);
  assert.is(refusal({ slow_mode_secs: 10, rank: 1, last_posted_at: now }), null);
});

test.run();
