// Users: visibility (until communities land: oneself, and the owner sees everyone), search,
// profiles, blocks and reports.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, eventCount, expectError, registerChat, type ChatAccount } from '../../support/chat.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { blocksStream } from '../../../domain/chat/streams.ts';

interface Ctx {
  s: TestServices;
  owner: ChatAccount;
  jane: ChatAccount;
  jack: ChatAccount;
}
const test = suite<Ctx>('chat users: visibility, search, blocks, reports');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_users', { CHATSVC_AUTH_RATE_PER_MIN: '100000' });
  ctx.owner = await registerChat(ctx.s.chat, 'the_owner');
  ctx.jane = await registerChat(ctx.s.chat, 'jane_doe', { extra: { display_name: 'Jane' } });
  ctx.jack = await registerChat(ctx.s.chat, 'jack_doe');
});
test.after(async ({ s }) => s?.close());

test('profiles: the owner sees anyone; others see themselves only (404, never 403)', async ({
  s,
  owner,
  jane,
  jack,
}) => {
  const seen = await http(`${s.chat}/api/users/${jane.id}`, { headers: bearer(owner) });
  assert.is(seen.status, 200);
  assert.equal(Object.keys(seen.body).sort(), [
    'avatar_url',
    'bio',
    'created_at',
    'display_name',
    'id',
    'is_bot',
    'pronouns',
    'username',
  ]);
  assert.is(seen.body.display_name, 'Jane');
  assert.is((await http(`${s.chat}/api/users/${jane.id}`, { headers: bearer(jane) })).status, 200);
  expectError(await http(`${s.chat}/api/users/${jane.id}`, { headers: bearer(jack) }), 404);
  expectError(await http(`${s.chat}/api/users/${owner.id}`, { headers: bearer(jack) }), 404);
  expectError(await http(`${s.chat}/api/users/00000000-0000-4000-8000-000000000000`, { headers: bearer(owner) }), 404);
  expectError(await http(`${s.chat}/api/users/nope`, { headers: bearer(owner) }), 404);
  expectError(await http(`${s.chat}/api/users/${jane.id}`), 401);
});

test('search: by username or display name, case-insensitive, prefix matches first, visible users only', async ({
  s,
  owner,
  jane,
  jack,
}) => {
  const all = await http(`${s.chat}/api/users/search?q=DOE`, { headers: bearer(owner) });
  assert.is(all.status, 200);
  assert.equal(
    all.body.users.map((u: { username: string }) => u.username),
    ['jack_doe', 'jane_doe'],
  );
  assert.equal(
    (await http(`${s.chat}/api/users/search?q=jane`, { headers: bearer(owner) })).body.users.map(
      (u: { id: string }) => u.id,
    ),
    [jane.id],
  );
  // Wildcards are literal.
  assert.equal((await http(`${s.chat}/api/users/search?q=%25`, { headers: bearer(owner) })).body.users, []);
  assert.equal(
    (await http(`${s.chat}/api/users/search?q=doe`, { headers: bearer(jack) })).body.users.map(
      (u: { id: string }) => u.id,
    ),
    [jack.id],
  );
  expectError(await http(`${s.chat}/api/users/search?q=`, { headers: bearer(owner) }), 400);
  expectError(await http(`${s.chat}/api/users/search`, { headers: bearer(owner) }), 400);
  expectError(await http(`${s.chat}/api/users/search?q=doe`), 401);
});

test('block, list, unblock: repeating either is harmless; oneself and unknown users are refused', async ({
  s,
  jane,
  jack,
}) => {
  assert.is(
    (await http(`${s.chat}/api/users/block`, { headers: bearer(jane), json: { user_id: jack.id } })).status,
    204,
  );
  assert.is(
    (await http(`${s.chat}/api/users/block`, { headers: bearer(jane), json: { user_id: jack.id } })).status,
    204,
  );
  const blocked = await http(`${s.chat}/api/users/blocked`, { headers: bearer(jane) });
  assert.equal(
    blocked.body.users.map((u: { id: string }) => u.id),
    [jack.id],
  );
  assert.ok(blocked.body.users[0].blocked_at);
  assert.equal((await http(`${s.chat}/api/users/blocked`, { headers: bearer(jack) })).body.users, []);
  const before = await eventCount(s.db.pool);
  expectError(await http(`${s.chat}/api/users/block`, { headers: bearer(jane), json: { user_id: jane.id } }), 400);
  expectError(
    await http(`${s.chat}/api/users/block`, {
      headers: bearer(jane),
      json: { user_id: '00000000-0000-4000-8000-000000000000' },
    }),
    404,
  );
  expectError(await http(`${s.chat}/api/users/block`, { headers: bearer(jane), json: { user_id: 'nope' } }), 400);
  expectError(await http(`${s.chat}/api/users/block`, { json: { user_id: jack.id } }), 401);
  assert.is(await eventCount(s.db.pool), before - 0);
  assert.is(
    (await http(`${s.chat}/api/users/unblock/${jack.id}`, { method: 'POST', headers: bearer(jane) })).status,
    204,
  );
  assert.is(
    (await http(`${s.chat}/api/users/unblock/${jack.id}`, { method: 'POST', headers: bearer(jane) })).status,
    204,
  );
  assert.equal((await http(`${s.chat}/api/users/blocked`, { headers: bearer(jane) })).body.users, []);
  expectError(
    await http(`${s.chat}/api/users/unblock/00000000-0000-4000-8000-000000000000`, {
      method: 'POST',
      headers: bearer(jane),
    }),
    404,
  );
  const { rows } = await s.db.pool.query(`SELECT type FROM events WHERE stream_id = $1 ORDER BY position`, [
    blocksStream(jane.id),
  ]);
  assert.equal(
    rows.map((r) => r.type),
    ['UserBlocked', 'UserUnblocked'],
  );
});

test('reports: a user or a message, with a reason; unknown users 404; bad shapes 400', async ({ s, jane, jack }) => {
  const r = await http(`${s.chat}/api/reports`, {
    headers: bearer(jane),
    json: { target_type: 'user', target_id: jack.id, reason: 'spam' },
  });
  assert.is(r.status, 201);
  assert.is(r.body.status, 'open');
  const row = (
    await s.db.pool.query('SELECT reporter_id, target_type, target_id, reason FROM chat_reports WHERE id = $1', [
      r.body.id,
    ])
  ).rows[0];
  assert.equal(row, { reporter_id: jane.id, target_type: 'user', target_id: jack.id, reason: 'spam' });
  assert.is(
    (
      await http(`${s.chat}/api/reports`, {
        headers: bearer(jane),
        json: { target_type: 'message', target_id: '00000000-0000-4000-8000-0000000000aa', reason: 'abuse' },
      })
    ).status,
    201,
  );
  expectError(
    await http(`${s.chat}/api/reports`, {
      headers: bearer(jane),
      json: { target_type: 'user', target_id: '00000000-0000-4000-8000-000000000000', reason: 'x' },
    }),
    404,
  );
  for (const body of [
    { target_type: 'channel', target_id: jack.id, reason: 'x' },
    { target_type: 'user', target_id: jack.id, reason: '' },
    { target_type: 'user', target_id: jack.id, reason: 'x'.repeat(1001) },
    { target_type: 'user', target_id: jack.id },
  ]) {
    expectError(await http(`${s.chat}/api/reports`, { headers: bearer(jane), json: body }), 400);
  }
  expectError(
    await http(`${s.chat}/api/reports`, { json: { target_type: 'user', target_id: jack.id, reason: 'x' } }),
    401,
  );
});

test.run();
