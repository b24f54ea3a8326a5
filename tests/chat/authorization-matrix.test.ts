// The authorisation matrix of the chat spaces (communities, groups, channels, DMs, messages,
// sender keys): every route × (community owner, admin, moderator, member, timed-out member,
// banned user, non-member, instance admin), one real HTTP request per cell. Refused cells are
// checked on every route, writes included (a refusal changes nothing); permitted cells on every
// read, since the route suites drive each permitted write and its effect. A test checks the
// table covers every spaces route the chat app answers.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createApp } from '../../main/apps.ts';
import type { ChatAccount } from '../support/chat.ts';
import { startTestApps, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';
import { fileUpload, png } from '../support/multipart.ts';
import { http } from '../support/services.ts';

const PRINCIPALS = ['owner', 'admin', 'moderator', 'member', 'timedout', 'banned', 'nonmember', 'instadmin'] as const;
type P = (typeof PRINCIPALS)[number];
const EVERY: P[] = [...PRINCIPALS];
const ALL: P[] = ['owner', 'admin', 'moderator', 'member', 'timedout'];
const MODS: P[] = ['owner', 'admin', 'moderator'];
const ADMINS: P[] = ['owner', 'admin'];
/** Members who may post (a timed-out member may not). */
const POSTERS: P[] = ['owner', 'admin', 'moderator', 'member'];
const NOT_OWNER_404: Partial<Record<P, number>> = {
  admin: 404,
  moderator: 404,
  member: 404,
  timedout: 404,
  banned: 404,
  nonmember: 404,
  instadmin: 404,
};

interface World {
  ids: Record<string, string>;
  codes: Record<string, string>;
}
interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  allow: P[];
  /** Status of a permitted call (reads only are called). */
  ok?: number;
  /** Refusals other than 403. */
  refuse?: Partial<Record<P, number>>;
  at(w: World): string;
  body?: unknown;
}

const r = (
  method: Route['method'],
  path: string,
  allow: P[],
  at: (w: World) => string,
  extra: Partial<Route> = {},
): Route => ({ method, path, allow, at, ...extra });

const ROUTES: Route[] = [
  r('GET', '/api/communities', EVERY, () => '/api/communities'),
  r('POST', '/api/communities', ['instadmin'], () => '/api/communities', { body: { name: 'x' } }),
  r('GET', '/api/communities/{cid}', ALL, (w) => `/api/communities/${w.ids.c}`),
  r('PATCH', '/api/communities/{cid}', ADMINS, (w) => `/api/communities/${w.ids.c}`, { body: { name: 'Matrix' } }),
  r('DELETE', '/api/communities/{cid}', ['owner'], (w) => `/api/communities/${w.ids.c}`),
  r(
    'POST',
    '/api/communities/{cid}/transfer-ownership',
    ['owner'],
    (w) => `/api/communities/${w.ids.c}/transfer-ownership`,
    { body: {} },
  ),
  r(
    'POST',
    '/api/communities/{cid}/leave',
    ['admin', 'moderator', 'member', 'timedout'],
    (w) => `/api/communities/${w.ids.c}/leave`,
    { refuse: { owner: 409 } },
  ),
  r('GET', '/api/communities/{cid}/members', ALL, (w) => `/api/communities/${w.ids.c}/members`),
  r(
    'PUT',
    '/api/communities/{cid}/members/{uid}/role',
    ADMINS,
    (w) => `/api/communities/${w.ids.c}/members/${w.ids.victim}/role`,
    { body: { role: 'moderator' } },
  ),
  r(
    'PUT',
    '/api/communities/{cid}/members/{uid}/nickname',
    MODS,
    (w) => `/api/communities/${w.ids.c}/members/${w.ids.victim}/nickname`,
    { body: { nickname: 'n' } },
  ),
  r(
    'DELETE',
    '/api/communities/{cid}/members/{uid}',
    MODS,
    (w) => `/api/communities/${w.ids.c}/members/${w.ids.victim}`,
  ),
  r('GET', '/api/communities/{cid}/bans', MODS, (w) => `/api/communities/${w.ids.c}/bans`),
  r('POST', '/api/communities/{cid}/bans/{uid}', MODS, (w) => `/api/communities/${w.ids.c}/bans/${w.ids.victim}`),
  r('DELETE', '/api/communities/{cid}/bans/{uid}', MODS, (w) => `/api/communities/${w.ids.c}/bans/${w.ids.banned}`),
  r('GET', '/api/communities/{cid}/invites', MODS, (w) => `/api/communities/${w.ids.c}/invites`),
  r('POST', '/api/communities/{cid}/invites', MODS, (w) => `/api/communities/${w.ids.c}/invites`, { body: {} }),
  r(
    'DELETE',
    '/api/communities/{cid}/invites/{iid}',
    MODS,
    (w) => `/api/communities/${w.ids.c}/invites/${w.ids.invite}`,
  ),
  r('GET', '/api/community-invites/{code}', EVERY, (w) => `/api/community-invites/${w.codes.invite}`),
  r(
    'POST',
    '/api/community-invites/{code}/accept',
    ['owner', 'admin', 'moderator', 'member', 'timedout', 'nonmember', 'instadmin'],
    (w) => `/api/community-invites/${w.codes.invite}/accept`,
  ),
  r('GET', '/api/communities/{cid}/groups', ALL, (w) => `/api/communities/${w.ids.c}/groups`),
  r(
    'POST',
    '/api/communities/{cid}/channels/{chid}/timeout',
    MODS,
    (w) => `/api/communities/${w.ids.c}/channels/${w.ids.ch}/timeout`,
    { body: { user_id: '', duration_secs: 60 } },
  ),
  r(
    'DELETE',
    '/api/communities/{cid}/channels/{chid}/timeout/{uid}',
    MODS,
    (w) => `/api/communities/${w.ids.c}/channels/${w.ids.ch}/timeout/${w.ids.victim}`,
  ),
  r(
    'POST',
    '/api/communities/{cid}/channels/{chid}/warn',
    MODS,
    (w) => `/api/communities/${w.ids.c}/channels/${w.ids.ch}/warn`,
    { body: { user_id: '', reason: 'r' } },
  ),
  r(
    'GET',
    '/api/communities/{cid}/channels/{chid}/warnings/{uid}',
    MODS,
    (w) => `/api/communities/${w.ids.c}/channels/${w.ids.ch}/warnings/${w.ids.victim}`,
  ),

  r('GET', '/api/groups', EVERY, () => '/api/groups'),
  r('POST', '/api/groups', ADMINS, () => '/api/groups', { body: { community_id: '', name: 'g' } }),
  r('GET', '/api/groups/discover', EVERY, () => '/api/groups/discover'),
  r('GET', '/api/groups/{id}', ALL, (w) => `/api/groups/${w.ids.g}`),
  r('PATCH', '/api/groups/{id}', ADMINS, (w) => `/api/groups/${w.ids.g}`, { body: { name: 'g2' } }),
  r('DELETE', '/api/groups/{id}', ADMINS, (w) => `/api/groups/${w.ids.g}`),
  r('POST', '/api/groups/{id}/transfer-ownership', ADMINS, (w) => `/api/groups/${w.ids.g}/transfer-ownership`, {
    body: {},
  }),
  r('POST', '/api/groups/{id}/join', ALL, (w) => `/api/groups/${w.ids.g}/join`),
  r(
    'POST',
    '/api/groups/{id}/leave',
    ['admin', 'moderator', 'member', 'timedout'],
    (w) => `/api/groups/${w.ids.g}/leave`,
    { refuse: { owner: 409 } },
  ),
  r('GET', '/api/groups/{id}/members', ALL, (w) => `/api/groups/${w.ids.g}/members`),
  r('GET', '/api/groups/{id}/channels', ALL, (w) => `/api/groups/${w.ids.g}/channels`),
  r('POST', '/api/groups/{id}/channels', ADMINS, (w) => `/api/groups/${w.ids.g}/channels`, { body: { name: 'c' } }),
  r('PATCH', '/api/groups/{id}/channels/{cid}', ADMINS, (w) => `/api/groups/${w.ids.g}/channels/${w.ids.ch}`, {
    body: { name: 'c2' },
  }),
  r('DELETE', '/api/groups/{id}/channels/{cid}', ADMINS, (w) => `/api/groups/${w.ids.g}/channels/${w.ids.ch}`),
  r('GET', '/api/groups/{id}/invites', ADMINS, (w) => `/api/groups/${w.ids.g}/invites`),
  r('POST', '/api/groups/{id}/invites', ADMINS, (w) => `/api/groups/${w.ids.g}/invites`, { body: {} }),
  r('GET', '/api/group-invites/{code}', EVERY, (w) => `/api/group-invites/${w.codes.group}`),
  r('POST', '/api/group-invites/{code}/accept', ALL, (w) => `/api/group-invites/${w.codes.group}/accept`),

  r('GET', '/api/channels', EVERY, () => '/api/channels'),
  r('POST', '/api/channels', EVERY, () => '/api/channels', { body: { name: 's' } }),
  r('GET', '/api/channels/{id}', ALL, (w) => `/api/channels/${w.ids.ch}`),
  r('PATCH', '/api/channels/{id}', MODS, (w) => `/api/channels/${w.ids.ch}`, { body: { topic: 't' } }),
  r('POST', '/api/channels/{id}/join', ALL, (w) => `/api/channels/${w.ids.ch}/join`),
  r(
    'POST',
    '/api/channels/{id}/leave',
    ['admin', 'moderator', 'member', 'timedout'],
    (w) => `/api/channels/${w.ids.ch}/leave`,
    { refuse: { owner: 409 } },
  ),
  r('POST', '/api/channels/{id}/transfer-ownership', ADMINS, (w) => `/api/channels/${w.ids.ch}/transfer-ownership`, {
    body: {},
  }),
  r('GET', '/api/channels/{id}/members', ALL, (w) => `/api/channels/${w.ids.ch}/members`),
  r(
    'PATCH',
    '/api/channels/{id}/members/{user_id}/role',
    ADMINS,
    (w) => `/api/channels/${w.ids.ch}/members/${w.ids.victim}/role`,
    { body: { role: 'moderator' } },
  ),
  r(
    'POST',
    '/api/channels/{id}/members/{user_id}/kick',
    MODS,
    (w) => `/api/channels/${w.ids.ch}/members/${w.ids.victim}/kick`,
  ),
  r(
    'POST',
    '/api/channels/{id}/members/{user_id}/ban',
    MODS,
    (w) => `/api/channels/${w.ids.ch}/members/${w.ids.victim}/ban`,
  ),
  r(
    'POST',
    '/api/channels/{id}/members/{user_id}/unban',
    MODS,
    (w) => `/api/channels/${w.ids.ch}/members/${w.ids.victim}/unban`,
  ),
  r('GET', '/api/dms', EVERY, () => '/api/dms'),
  r('POST', '/api/dms', ALL, () => '/api/dms', { body: { user_id: '' } }),

  r('GET', '/api/channels/unread', EVERY, () => '/api/channels/unread'),
  r('GET', '/api/messages/search', EVERY, () => '/api/messages/search?sender=00000000-0000-4000-8000-000000000000'),
  r('GET', '/api/channels/{id}/messages/search', ALL, (w) => `/api/channels/${w.ids.ch}/messages/search`),
  r(
    'POST',
    '/api/channels/{id}/messages',
    ['owner', 'admin', 'moderator', 'member'],
    (w) => `/api/channels/${w.ids.ch}/messages`,
    { body: { ciphertext: 'x' } },
  ),
  r('GET', '/api/channels/{id}/messages', ALL, (w) => `/api/channels/${w.ids.ch}/messages`),
  r(
    'PATCH',
    '/api/channels/{id}/messages/{msg_id}',
    ['owner'],
    (w) => `/api/channels/${w.ids.ch}/messages/${w.ids.m}`,
    { body: { ciphertext: 'y' } },
  ),
  r('DELETE', '/api/channels/{id}/messages/{msg_id}', MODS, (w) => `/api/channels/${w.ids.ch}/messages/${w.ids.m}`),
  r(
    'GET',
    '/api/channels/{id}/messages/{msg_id}/history',
    ALL,
    (w) => `/api/channels/${w.ids.ch}/messages/${w.ids.m}/history`,
  ),
  r('GET', '/api/channels/{id}/threads/{msg_id}', ALL, (w) => `/api/channels/${w.ids.ch}/threads/${w.ids.m}`),
  r('GET', '/api/channels/{id}/pins', ALL, (w) => `/api/channels/${w.ids.ch}/pins`),
  r('POST', '/api/channels/{id}/pins/{msg_id}', MODS, (w) => `/api/channels/${w.ids.ch}/pins/${w.ids.m}`),
  r('DELETE', '/api/channels/{id}/pins/{msg_id}', MODS, (w) => `/api/channels/${w.ids.ch}/pins/${w.ids.m}`),
  r('POST', '/api/channels/{id}/read-cursor', ALL, (w) => `/api/channels/${w.ids.ch}/read-cursor`, {
    body: { message_id: '' },
  }),
  r('GET', '/api/channels/{id}/read-cursors', ALL, (w) => `/api/channels/${w.ids.ch}/read-cursors`),
  r('POST', '/api/channels/{id}/sender-keys', ALL, (w) => `/api/channels/${w.ids.ch}/sender-keys`, {
    body: { chain_id: 1, distribution: { chain_id: 1, iteration: 0, chain_key: Array(32).fill(1), sender_id: 'x' } },
  }),
  r('GET', '/api/channels/{id}/sender-keys', ALL, (w) => `/api/channels/${w.ids.ch}/sender-keys`),
  // Polls, scheduled messages, bookmarks (issue 18).
  r('POST', '/api/channels/{id}/polls', POSTERS, (w) => `/api/channels/${w.ids.ch}/polls`, {
    body: { question: 'q', options: ['a', 'b'] },
  }),
  r('GET', '/api/channels/{id}/polls', ALL, (w) => `/api/channels/${w.ids.ch}/polls`),
  r('GET', '/api/polls/{id}', ALL, (w) => `/api/polls/${w.ids.poll}`),
  r('POST', '/api/polls/{id}/vote', ALL, (w) => `/api/polls/${w.ids.poll}/vote`, { body: { option_ids: [] } }),
  r('POST', '/api/polls/{id}/close', [...MODS, 'member', 'instadmin'], (w) => `/api/polls/${w.ids.poll}/close`),
  r('POST', '/api/channels/{id}/meetings', ALL, (w) => `/api/channels/${w.ids.ch}/meetings`, {
    body: { title: 'm', start: '2027-01-04T09:00', time_zone: 'UTC' },
  }),
  r('GET', '/api/channels/{id}/meetings', ALL, (w) => `/api/channels/${w.ids.ch}/meetings`),
  r('GET', '/api/channels/{id}/meetings.ics', ALL, (w) => `/api/channels/${w.ids.ch}/meetings.ics`),
  r('POST', '/api/messages/schedule', POSTERS, () => '/api/messages/schedule', {
    body: { channel_id: '', ciphertext: 'x', send_at: new Date(Date.now() + 86_400_000).toISOString() },
  }),
  r('GET', '/api/messages/scheduled', EVERY, () => '/api/messages/scheduled'),
  r('PATCH', '/api/messages/scheduled/{id}', ['owner'], (w) => `/api/messages/scheduled/${w.ids.sched}`, {
    body: { ciphertext: 'y' },
    refuse: NOT_OWNER_404,
  }),
  r('DELETE', '/api/messages/scheduled/{id}', ['owner'], (w) => `/api/messages/scheduled/${w.ids.sched}`, {
    refuse: NOT_OWNER_404,
  }),
  r('POST', '/api/bookmarks/{message_id}', ALL, (w) => `/api/bookmarks/${w.ids.m}`, {
    refuse: { banned: 404, nonmember: 404, instadmin: 404 },
  }),
  r('DELETE', '/api/bookmarks/{message_id}', EVERY, (w) => `/api/bookmarks/${w.ids.m}`),
  r('GET', '/api/bookmarks', EVERY, () => '/api/bookmarks'),

  // Files, gated assets, emoji, link previews, GIFs (issue 18) and the admin file routes.
  r('POST', '/api/files/upload', EVERY, () => '/api/files/upload'),
  r('GET', '/api/files/{id}/meta', ALL, (w) => `/api/files/${w.ids.file}/meta`, {
    refuse: { banned: 404, nonmember: 404, instadmin: 404 },
  }),
  r('GET', '/api/files/{id}', ALL, (w) => `/api/files/${w.ids.file}`, {
    refuse: { banned: 404, nonmember: 404, instadmin: 404 },
  }),
  r('DELETE', '/api/files/{id}', ['owner'], (w) => `/api/files/${w.ids.file}`, {
    refuse: { banned: 404, nonmember: 404, instadmin: 404 },
  }),
  r('POST', '/api/communities/{cid}/icon', ADMINS, (w) => `/api/communities/${w.ids.c}/icon`),
  r('POST', '/api/communities/{cid}/banner', ADMINS, (w) => `/api/communities/${w.ids.c}/banner`),
  r('GET', '/api/communities/{cid}/assets', ALL, (w) => `/api/communities/${w.ids.c}/assets`),
  r('POST', '/api/groups/{id}/icon', ADMINS, (w) => `/api/groups/${w.ids.g}/icon`),
  r('POST', '/api/groups/{id}/banner', ADMINS, (w) => `/api/groups/${w.ids.g}/banner`),
  r('POST', '/api/groups/{id}/voice-background', ADMINS, (w) => `/api/groups/${w.ids.g}/voice-background`),
  r('GET', '/api/groups/{id}/assets', ALL, (w) => `/api/groups/${w.ids.g}/assets`),
  r('GET', '/api/community-assets/{filename}', [...ALL, 'instadmin'], (w) => `/api/community-assets/${w.ids.cicon}`, {
    refuse: { banned: 404, nonmember: 404 },
  }),
  r('GET', '/api/group-assets/{filename}', [...ALL, 'instadmin'], (w) => `/api/group-assets/${w.ids.gicon}`, {
    refuse: { banned: 404, nonmember: 404 },
  }),
  r('GET', '/api/communities/{cid}/emojis', [...ALL, 'instadmin'], (w) => `/api/communities/${w.ids.c}/emojis`, {
    refuse: { banned: 404, nonmember: 404 },
  }),
  r('POST', '/api/communities/{cid}/emojis', ADMINS, (w) => `/api/communities/${w.ids.c}/emojis`),
  r(
    'DELETE',
    '/api/communities/{cid}/emojis/{eid}',
    ADMINS,
    (w) => `/api/communities/${w.ids.c}/emojis/${w.ids.emoji}`,
  ),
  r('GET', '/api/emojis/{id}', [...ALL, 'instadmin'], (w) => `/api/emojis/${w.ids.emoji}`, {
    refuse: { banned: 404, nonmember: 404 },
  }),
  r('POST', '/api/link-preview', EVERY, () => '/api/link-preview'),
  r('GET', '/api/link-preview/images/{sha256}', EVERY, () => `/api/link-preview/images/${'0'.repeat(64)}`, { ok: 404 }),
  r('GET', '/api/gifs/search', EVERY, () => '/api/gifs/search?q=cat', { ok: 503 }),
  r('GET', '/api/gifs/trending', EVERY, () => '/api/gifs/trending', { ok: 503 }),
  r('GET', '/api/admin/files', ['instadmin'], () => '/api/admin/files'),
  r('GET', '/api/admin/storage-stats', ['instadmin'], () => '/api/admin/storage-stats'),
  r('DELETE', '/api/admin/files/{id}', ['instadmin'], (w) => `/api/admin/files/${w.ids.file}`),
  r('POST', '/api/admin/files/{id}/quarantine', ['instadmin'], (w) => `/api/admin/files/${w.ids.file}/quarantine`),
  r('POST', '/api/admin/files/{id}/unquarantine', ['instadmin'], (w) => `/api/admin/files/${w.ids.file}/unquarantine`),
  r('GET', '/api/admin/blocked-hashes', ['instadmin'], () => '/api/admin/blocked-hashes'),
  r('POST', '/api/admin/blocked-hashes', ['instadmin'], () => '/api/admin/blocked-hashes', {
    body: { sha256: '0'.repeat(64) },
  }),
  r(
    'DELETE',
    '/api/admin/blocked-hashes/{id}',
    ['instadmin'],
    () => '/api/admin/blocked-hashes/00000000-0000-4000-8000-000000000000',
  ),
];

/** Route prefixes of the spaces; other chat routes have their own suites (a channel's webhooks: authorization-matrix-admin.test.ts). */
const SPACES =
  /^\/api\/(communities|community-invites|groups|group-invites|channels|dms|messages|polls|bookmarks|files|community-assets|group-assets|emojis|link-preview|gifs|admin\/(files|storage-stats|blocked-hashes))(\/|$)/;

interface Ctx {
  s: TestServices;
  sp: Spaces;
  w: World;
  who: Record<P, ChatAccount>;
}
const test = suite<Ctx>('chat spaces: authorisation matrix');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_spaces_matrix', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  const sp = (ctx.sp = new Spaces(ctx.s));
  const who = {} as Record<P, ChatAccount>;
  who.instadmin = await sp.register('inst'); // the first account: instance owner and admin
  for (const p of PRINCIPALS.filter((x) => x !== 'instadmin')) who[p] = await sp.register(p.slice(0, 8));
  const victim = await sp.register('victim');
  ctx.who = who;
  // The instance admin creates the community and hands it over.
  const c = await sp.community(who.instadmin);
  await sp.join(c, who.instadmin, [who.owner]);
  await sp.ok(who.instadmin, 'POST', `/api/communities/${c}/transfer-ownership`, { user_id: who.owner.id });
  await sp.ok(who.instadmin, 'POST', `/api/communities/${c}/leave`, undefined, 204);
  await sp.join(c, who.owner, [who.admin], 'admin');
  await sp.join(c, who.owner, [who.moderator], 'moderator');
  await sp.join(c, who.owner, [who.member, who.timedout, who.banned, victim]);
  const g = await sp.group(who.owner, c);
  for (const p of ['admin', 'moderator', 'member', 'timedout', 'banned'] as const)
    await sp.ok(who[p], 'POST', `/api/groups/${g}/join`);
  await sp.ok(victim, 'POST', `/api/groups/${g}/join`);
  const ch = await sp.channel(who.owner, g, [who.admin, who.moderator, who.member, who.timedout, who.banned, victim]);
  const m = (await sp.post(who.owner, ch, 'root')).id;
  const poll = (
    await sp.ok(who.member, 'POST', `/api/channels/${ch}/polls`, { question: 'q', options: ['a', 'b'] }, 201)
  ).id;
  const sched = (
    await sp.ok(
      who.owner,
      'POST',
      '/api/messages/schedule',
      { channel_id: ch, ciphertext: 'x', send_at: new Date(Date.now() + 86_400_000).toISOString() },
      201,
    )
  ).id;
  await sp.ok(who.owner, 'POST', `/api/communities/${c}/channels/${ch}/timeout`, {
    user_id: who.timedout.id,
    duration_secs: 86_400,
  });
  await sp.ok(who.owner, 'POST', `/api/communities/${c}/bans/${who.banned.id}`, {}, 204);
  const invite = await sp.ok(who.owner, 'POST', `/api/communities/${c}/invites`, {}, 201);
  const group = await sp.ok(who.owner, 'POST', `/api/groups/${g}/invites`, {}, 201);
  const upload = async (
    by: ChatAccount,
    path: string,
    data: Uint8Array | string,
    fields: Record<string, string> = {},
  ) => {
    const r = await http(`${sp.base}${path}`, fileUpload(by, data, { fields }));
    assert.is(r.status, 201, r.text);
    return r.body;
  };
  const file = (await upload(who.owner, '/api/files/upload', 'matrix file', { channel_id: ch })).id;
  const cicon = (await upload(who.owner, `/api/communities/${c}/icon`, png(1))).filename;
  const gicon = (await upload(who.owner, `/api/groups/${g}/icon`, png(2))).filename;
  const emoji = (await upload(who.owner, `/api/communities/${c}/emojis`, png(3), { name: 'matrix' })).id;
  ctx.w = {
    ids: {
      c,
      g,
      ch,
      m,
      poll,
      sched,
      victim: victim.id,
      banned: who.banned.id,
      invite: invite.id,
      file,
      cicon,
      gicon,
      emoji,
    },
    codes: { invite: invite.code, group: group.code },
  };
});
test.after(async ({ s }) => s?.close());

test('the table covers every spaces route the chat app answers', ({ s }) => {
  const app = createApp('chat', s.platform);
  const answered = new Set(
    app.routes
      .filter((x) => x.method !== 'ALL')
      .map((x) => `${x.method} ${x.path.replace(/:([^/]+)/g, '{$1}')}`)
      .filter((x) => SPACES.test(x.split(' ')[1]!) && !x.endsWith('/webhooks')),
  );
  const covered = new Set(ROUTES.map((x) => `${x.method} ${x.path}`));
  assert.equal([...answered].filter((x) => !covered.has(x)).sort(), []);
  assert.equal([...covered].filter((x) => !answered.has(x)).sort(), []);
});

test('every route × every principal: refusals everywhere, permitted reads', async ({ sp, w, who }) => {
  const failures: string[] = [];
  let cells = 0;
  for (const route of ROUTES) {
    for (const p of PRINCIPALS) {
      const allowed = route.allow.includes(p);
      if (allowed && route.method !== 'GET') continue;
      let body = route.body;
      if (body && typeof body === 'object') {
        body = JSON.parse(
          JSON.stringify(body)
            .replaceAll('"user_id":""', `"user_id":"${w.ids.victim}"`)
            .replaceAll('"community_id":""', `"community_id":"${w.ids.c}"`)
            .replaceAll('"message_id":""', `"message_id":"${w.ids.m}"`)
            .replaceAll('"channel_id":""', `"channel_id":"${w.ids.ch}"`)
            .replaceAll('"sender_id":"x"', `"sender_id":"${who[p].id}"`),
        );
        if (route.path.endsWith('transfer-ownership')) body = { user_id: w.ids.victim };
        if (route.path === '/api/dms') body = { user_id: who.owner.id };
      }
      const expected = allowed ? (route.ok ?? 200) : (route.refuse?.[p] ?? 403);
      const res = await sp.call(
        who[p],
        route.method,
        route.at(w),
        body ?? (route.method === 'GET' || route.method === 'DELETE' ? undefined : {}),
      );
      cells += 1;
      if (res.status !== expected)
        failures.push(
          `${route.method} ${route.path} as ${p}: expected ${expected}, got ${res.status} ${res.text.slice(0, 120)}`,
        );
    }
  }
  assert.equal(failures, []);
  assert.ok(cells > 300, `${cells} cells`);
});

test.run();
