// Gated assets through real HTTP: community icon and banner, group icon, banner and voice
// background, custom emoji; who uploads (owners and admins), what (raster images by their bytes,
// SVG 415, 8 MiB 413), replacement, and the one gate: 401 first, then members (a private
// group's for its assets), not banned, or instance admins; everyone else gets the
// byte-identical 404 of a missing asset. Rebuilt read models equal the live ones.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ASSET_EVENT_TYPES } from '../../../domain/chat/assets/events.ts';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { fileUpload, png, SVG } from '../../support/multipart.ts';
import { http, logText, startTestApps, type TestServices, type Reply } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  inst: ChatAccount;
  owner: ChatAccount;
  cadmin: ChatAccount;
  member: ChatAccount;
  banned: ChatAccount;
  out: ChatAccount;
  gmember: ChatAccount;
  cid: string;
  gid: string;
}
const test = suite<Ctx>('chat gated assets');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_assets', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    CHATSVC_COMMUNITY_CREATION: 'open',
  });
  const sp = (ctx.sp = new Spaces(ctx.s));
  ctx.inst = await sp.register('inst');
  for (const k of ['owner', 'cadmin', 'member', 'banned', 'out', 'gmember'] as const) ctx[k] = await sp.register(k);
  ctx.cid = await sp.community(ctx.owner);
  await sp.join(ctx.cid, ctx.owner, [ctx.cadmin], 'admin');
  await sp.join(ctx.cid, ctx.owner, [ctx.member, ctx.banned, ctx.gmember]);
  await sp.ok(ctx.owner, 'POST', `/api/communities/${ctx.cid}/bans/${ctx.banned.id}`, {}, 204);
  ctx.gid = await sp.group(ctx.owner, ctx.cid, 'private');
  const invite = await sp.ok(ctx.owner, 'POST', `/api/groups/${ctx.gid}/invites`, {}, 201);
  await sp.ok(ctx.gmember, 'POST', `/api/group-invites/${invite.code}/accept`);
});
test.after(async ({ s }) => s?.close());

const send = (
  s: TestServices,
  who: ChatAccount,
  path: string,
  data: string | Uint8Array,
  fields: Record<string, string> = {},
  filename = 'image.png',
) => http(`${s.chat}${path}`, fileUpload(who, data, { filename, fields }));
const get = (s: TestServices, who: ChatAccount | null, path: string, headers: Record<string, string> = {}) =>
  http(`${s.chat}${path}`, { headers: { ...(who ? { authorization: `Bearer ${who.access}` } : {}), ...headers } });
/** Every refusal of the gate is these exact bytes. */
let missing: string | null = null;
function hidden(r: Reply): void {
  assert.is(r.status, 404, r.text);
  missing ??= r.text;
  assert.is(r.text, missing, 'the same bytes as a missing asset');
  assert.is(r.headers.get('content-type'), 'application/json');
}

test('community icon and banner: owners and admins upload raster images; SVG 415; 8 MiB 413; a new one replaces', async ({
  s,
  sp,
  owner,
  cadmin,
  member,
  out,
  cid,
}) => {
  hidden(await get(s, member, '/api/community-assets/nothing-here.png'));
  expectError(await send(s, member, `/api/communities/${cid}/icon`, png(1)), 403);
  expectError(await send(s, out, `/api/communities/${cid}/icon`, png(1)), 403);
  expectError(await send(s, owner, '/api/communities/00000000-0000-4000-8000-000000000000/icon', png(1)), 404);
  const svg = await send(s, owner, `/api/communities/${cid}/icon`, SVG, {}, 'x.png');
  expectError(svg, 415);
  assert.is(svg.body.code, 'unsupported_media_type');
  expectError(await send(s, owner, `/api/communities/${cid}/icon`, 'just text'), 415);
  const huge = Buffer.concat([png(2), Buffer.alloc(8 * 1024 * 1024)]);
  const big = await send(s, owner, `/api/communities/${cid}/banner`, huge);
  expectError(big, 413);
  assert.is(big.body.code, 'file_too_large');
  const first = await send(s, owner, `/api/communities/${cid}/icon`, png(3));
  assert.is(first.status, 201, first.text);
  assert.equal(
    [first.body.kind, first.body.mime_type, first.body.url],
    ['icon', 'image/png', `/api/community-assets/${first.body.filename}`],
  );
  const banner = await send(s, cadmin, `/api/communities/${cid}/banner`, png(4));
  assert.is(banner.status, 201);
  const second = await send(s, cadmin, `/api/communities/${cid}/icon`, png(5));
  assert.is(second.status, 201);
  hidden(await get(s, member, first.body.url));
  const shown = await get(s, member, second.body.url);
  assert.is(shown.status, 200);
  assert.equal(
    [
      shown.headers.get('content-type'),
      shown.headers.get('cache-control'),
      shown.headers.get('etag'),
      shown.headers.get('x-content-type-options'),
    ],
    ['image/png', 'private', `"${second.body.sha256}"`, 'nosniff'],
  );
  assert.is((await get(s, member, second.body.url, { 'if-none-match': `"${second.body.sha256}"` })).status, 304);
  const listed = await sp.ok(member, 'GET', `/api/communities/${cid}/assets`);
  assert.equal(
    listed.assets.map((a: { kind: string; filename: string }) => [a.kind, a.filename]),
    [
      ['banner', banner.body.filename],
      ['icon', second.body.filename],
    ],
  );
  expectError(await sp.call(out, 'GET', `/api/communities/${cid}/assets`), 403);
});

test('the gate: 401 first; members and instance admins see; the banned and outsiders get the bytes of a missing asset', async ({
  s,
  inst,
  member,
  banned,
  out,
  owner,
  cid,
}) => {
  const icon = (await send(s, owner, `/api/communities/${cid}/icon`, png(6))).body;
  expectError(await get(s, null, icon.url), 401);
  assert.is((await get(s, member, icon.url)).status, 200);
  assert.is((await get(s, inst, icon.url)).status, 200, 'instance admins always pass');
  hidden(await get(s, banned, icon.url));
  hidden(await get(s, out, icon.url));
  hidden(await get(s, out, '/api/community-assets/..%2F..%2Fetc%2Fpasswd'));
  hidden(await get(s, out, `/api/group-assets/${icon.filename}`));
});

test("private group assets: the group's members and community admins; other community members get the 404", async ({
  s,
  sp,
  owner,
  cadmin,
  member,
  gmember,
  gid,
}) => {
  expectError(await send(s, gmember, `/api/groups/${gid}/icon`, png(7)), 403);
  expectError(await send(s, member, `/api/groups/${gid}/icon`, png(7)), 404);
  const bg = await send(s, owner, `/api/groups/${gid}/voice-background`, png(8));
  assert.is(bg.status, 201, bg.text);
  assert.equal([bg.body.kind, bg.body.url], ['voice_background', `/api/group-assets/${bg.body.filename}`]);
  assert.is((await send(s, cadmin, `/api/groups/${gid}/icon`, png(9))).status, 201);
  assert.is((await send(s, owner, `/api/groups/${gid}/banner`, png(10))).status, 201);
  expectError(await send(s, owner, `/api/groups/${gid}/banner`, SVG), 415);
  assert.is((await get(s, gmember, bg.body.url)).status, 200);
  assert.is((await get(s, cadmin, bg.body.url)).status, 200);
  hidden(await get(s, member, bg.body.url));
  assert.is((await sp.ok(gmember, 'GET', `/api/groups/${gid}/assets`)).assets.length, 3);
  expectError(await sp.call(member, 'GET', `/api/groups/${gid}/assets`), 404);
});

test('custom emoji: owners and admins add; names unique and checked; members list and see; the 51st is refused', async ({
  s,
  sp,
  owner,
  cadmin,
  member,
  out,
  banned,
  inst,
  cid,
}) => {
  expectError(await send(s, member, `/api/communities/${cid}/emojis`, png(11), { name: 'wave' }), 403);
  expectError(await send(s, owner, `/api/communities/${cid}/emojis`, png(11), { name: 'Wave!' }), 400);
  expectError(await send(s, owner, `/api/communities/${cid}/emojis`, png(11)), 400);
  expectError(await send(s, owner, `/api/communities/${cid}/emojis`, SVG, { name: 'vector' }), 415);
  const wave = await send(s, owner, `/api/communities/${cid}/emojis`, png(11), { name: 'wave' });
  assert.is(wave.status, 201, wave.text);
  assert.equal([wave.body.name, wave.body.url, wave.body.community_id], ['wave', `/api/emojis/${wave.body.id}`, cid]);
  const dup = await send(s, cadmin, `/api/communities/${cid}/emojis`, png(12), { name: 'wave' });
  expectError(dup, 409);
  assert.is(dup.body.code, 'emoji_name_taken');
  assert.equal(
    (await sp.ok(member, 'GET', `/api/communities/${cid}/emojis`)).emojis.map((e: { name: string }) => e.name),
    ['wave'],
  );
  assert.is((await sp.call(inst, 'GET', `/api/communities/${cid}/emojis`)).status, 200);
  hidden(await get(s, out, `/api/communities/${cid}/emojis`));
  hidden(await get(s, banned, `/api/communities/${cid}/emojis`));
  hidden(await get(s, out, '/api/communities/00000000-0000-4000-8000-000000000000/emojis'));
  assert.is((await get(s, member, wave.body.url)).status, 200);
  hidden(await get(s, out, wave.body.url));
  hidden(await get(s, member, '/api/emojis/00000000-0000-4000-8000-000000000000'));
  hidden(await get(s, member, '/api/emojis/not-an-id'));
  // Removal.
  expectError(await sp.call(member, 'DELETE', `/api/communities/${cid}/emojis/${wave.body.id}`), 403);
  expectError(
    await sp.call(owner, 'DELETE', `/api/communities/${cid}/emojis/00000000-0000-4000-8000-000000000000`),
    404,
  );
  assert.is((await sp.call(cadmin, 'DELETE', `/api/communities/${cid}/emojis/${wave.body.id}`)).status, 204);
  hidden(await get(s, member, wave.body.url));
  // Fifty, then the 51st.
  for (let i = 0; i < 50; i++)
    assert.is((await send(s, owner, `/api/communities/${cid}/emojis`, png(100 + i), { name: `e_${i}` })).status, 201);
  const over = await send(s, owner, `/api/communities/${cid}/emojis`, png(200), { name: 'one_more' });
  expectError(over, 409);
  assert.is(over.body.code, 'emoji_limit_reached');
});

test('every asset event is in the log; the rebuilt read model equals the live one', async ({ s }) => {
  const text = await logText(s);
  for (const type of ASSET_EVENT_TYPES) assert.ok(text.includes(` ${type} `), type);
  const TABLES = ['chat_space_assets', 'chat_emojis'];
  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(TABLES.map(async (t) => [t, (await s.db.pool.query(`SELECT * FROM ${t} ORDER BY 1, 2`)).rows])),
    );
  const live = await snapshot();
  await s.platform.engine.stop();
  assert.ok((await s.platform.engine.rebuild('chat_assets')) > 0);
  assert.equal(await snapshot(), live);
});

test.run();
