// The stricter limit on the auth routes (per client address) and the general per-user token
// bucket: 429 with Retry-After, in the chat error body with code rate_limited. Also the TURN
// credentials when a relay is configured.

import { createHmac } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { bearer, registerChat, uniqueName, type ChatAccount } from '../../support/chat.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

interface Ctx {
  s: TestServices;
  kim: ChatAccount;
}
const test = suite<Ctx>('chat limits and TURN credentials');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_limits', {
    CHATSVC_AUTH_RATE_PER_MIN: '4',
    CHATSVC_API_RATE_PER_SEC: '3',
    CHATSVC_TURN_URLS: 'turn:turn.example.test:3478?transport=udp, turns:turn.example.test:5349',
    CHATSVC_TURN_SECRET: 'turn-shared-secret',
  });
  ctx.kim = await registerChat(ctx.s.chat, uniqueName('kim'), { peer: '10.9.9.9' });
});
test.after(async ({ s }) => s?.close());

test('auth routes: CHATSVC_AUTH_RATE_PER_MIN requests a minute per address, then 429 with Retry-After', async ({
  s,
  kim,
}) => {
  const attempt = (peer: string) =>
    http(`${s.chat}/api/auth/login`, { json: { username: kim.username, password: 'wrong password' }, peer });
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await attempt('10.0.0.1')).status);
  assert.equal(statuses, [401, 401, 401, 401, 429]);
  const refused = await attempt('10.0.0.1');
  assert.is(refused.status, 429);
  assert.is(refused.body.code, 'rate_limited');
  assert.type(refused.body.error, 'string');
  const retry = Number(refused.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, String(retry));
  // Even a correct login waits; other routes of the family too; another address does not.
  assert.is(
    (
      await http(`${s.chat}/api/auth/login`, {
        json: { username: kim.username, password: kim.password },
        peer: '10.0.0.1',
      })
    ).status,
    429,
  );
  assert.is((await http(`${s.chat}/api/auth/refresh`, { json: { refresh_token: 'x' }, peer: '10.0.0.1' })).status, 429);
  assert.is((await attempt('10.0.0.2')).status, 401);
  s.clock.advance(61_000);
  assert.is(
    (
      await http(`${s.chat}/api/auth/login`, {
        json: { username: kim.username, password: kim.password },
        peer: '10.0.0.1',
      })
    ).status,
    200,
  );
});

test('API token bucket: a burst of twice the rate, then 429 per user; it refills at the rate', async ({ s, kim }) => {
  s.clock.advance(10_000);
  const statuses = [];
  for (let i = 0; i < 7; i++)
    statuses.push((await http(`${s.chat}/api/keys/prekeys/count`, { headers: bearer(kim) })).status);
  assert.equal(statuses, [200, 200, 200, 200, 200, 200, 429]);
  const refused = await http(`${s.chat}/api/account/me`, { headers: bearer(kim) });
  assert.is(refused.status, 429);
  assert.is(refused.body.code, 'rate_limited');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  // Another user has a bucket of their own.
  const lee = await registerChat(s.chat, uniqueName('lee'), { peer: '10.8.8.8' });
  assert.is((await http(`${s.chat}/api/account/me`, { headers: bearer(lee) })).status, 200);
  s.clock.advance(2_100);
  assert.is((await http(`${s.chat}/api/account/me`, { headers: bearer(kim) })).status, 200);
});

test('turn-credentials: the TURN REST convention, valid for 24 hours', async ({ s, kim }) => {
  s.clock.advance(10_000);
  const r = await http(`${s.chat}/api/account/turn-credentials`, { headers: bearer(kim) });
  assert.is(r.status, 200);
  const [expiry, userId] = r.body.username.split(':');
  assert.is(userId, kim.id);
  const ttl = Number(expiry) - Math.floor(s.clock.now().getTime() / 1000);
  assert.ok(ttl > 86_390 && ttl <= 86_400, String(ttl));
  assert.is(r.body.ttl, 86_400);
  assert.is(r.body.password, createHmac('sha1', 'turn-shared-secret').update(r.body.username).digest('base64'));
  assert.equal(r.body.uris, ['turn:turn.example.test:3478?transport=udp', 'turns:turn.example.test:5349']);
  assert.is(r.headers.get('cache-control'), 'no-store');
});

test.run();
