// Web push without the test loopback allowance (as in production): loopback and private
// endpoints are refused when subscribing (422 destination_not_allowed), and a subscription that
// names one anyway (appended to the log directly, as an older rule might have let through) is
// refused again when sending: the guard checks the address the connection would use, so the
// local server hears nothing; the refusal is logged without the endpoint.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { sealSecret } from '../../../crypto/seal.ts';
import { endpointSealContext, keysSealContext, pushSubscriptionId } from '../../../domain/chat/push/decider.ts';
import { pushSubscriptionStream, reminderStream } from '../../../domain/chat/streams.ts';
import type { ChatBackground } from '../../../main/chat-background.ts';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { browser, PushService, settlePush } from '../../support/push.ts';
import { backgroundOf } from '../../support/schedule.ts';
import { startTestApps, type TestServices } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';

interface Ctx {
  s: TestServices;
  sp: Spaces;
  push: PushService;
  bg: ChatBackground;
  alice: ChatAccount;
}
const test = suite<Ctx>('chat web push: SSRF refusals');

test.before(async (ctx) => {
  ctx.push = await new PushService().start();
  ctx.s = await startTestApps('chat_push_ssrf', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.alice = await ctx.sp.register('alice');
  ctx.bg = backgroundOf(ctx.s.platform);
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
});
test.after(async ({ s, push, bg }) => {
  await bg?.stop();
  await s?.close();
  await push?.close();
});

test('loopback, private and plain-http endpoints are refused when subscribing', async (ctx) => {
  const keys = browser().keys;
  for (const endpoint of [
    ctx.push.url('/alice'),
    'https://127.0.0.1/push',
    'https://[::1]/push',
    'https://localhost/push',
    'https://10.1.2.3/push',
    'https://172.16.0.1/push',
    'https://169.254.169.254/push',
    'https://[::ffff:127.0.0.1]/push',
    'https://[64:ff9b::a00:1]/push',
    'https://0.0.0.0/push',
    'https://push.example:8443/push',
    'http://push.example/push',
  ]) {
    const r = await ctx.sp.call(ctx.alice, 'POST', '/api/push/subscriptions', { endpoint, keys });
    expectError(r, 422);
    assert.is(r.body.code, 'destination_not_allowed', endpoint);
  }
  assert.equal((await ctx.sp.ok(ctx.alice, 'GET', '/api/push/subscriptions')).subscriptions, []);
});

test('a stored loopback endpoint is refused again at send time: nothing reaches it', async (ctx) => {
  const endpoint = ctx.push.url('/sneaky');
  const id = pushSubscriptionId(endpoint);
  const keys = JSON.stringify(browser().keys);
  const key = ctx.s.platform.sealKey;
  await ctx.s.platform.commands.record(
    pushSubscriptionStream(id),
    {
      type: 'PushSubscriptionAdded',
      data: {
        subscription_id: id,
        user_id: ctx.alice.id,
        origin: ctx.push.origin,
        endpoint_sealed: sealSecret(key, endpoint, endpointSealContext(id)),
        keys_sealed: sealSecret(key, keys, keysSealContext(id)),
        keys_hash: 'x',
        at: new Date().toISOString(),
      },
    },
    { actor: { kind: 'user', id: ctx.alice.id }, correlationId: null },
  );
  const meeting = randomUUID();
  await ctx.s.platform.commands.record(
    reminderStream(`${meeting}-x-5`),
    {
      type: 'MeetingReminderFired',
      data: {
        meeting_id: meeting,
        occurrence_id: 'x',
        channel_id: randomUUID(),
        title: 'T',
        start: new Date(ctx.s.clock.now().getTime() + 600_000).toISOString(),
        offset_minutes: 5,
        reminder_id: `${meeting}-x-5`,
        recipient_ids: [ctx.alice.id],
        at: ctx.s.clock.now().toISOString(),
      },
    },
    { actor: { kind: 'system', id: 'scheduler' }, correlationId: null },
  );
  await settlePush(ctx.s.db.pool, ctx.bg.pusher);
  assert.is(ctx.push.received.length, 0);
  assert.ok(
    ctx.s.logLines.some((l) => l.includes('push_failed') && l.includes('destination_not_allowed') && l.includes(id)),
  );
  assert.not.ok(
    ctx.s.logLines.some((l) => l.includes(endpoint) || l.includes('/sneaky')),
    'no endpoint in the log lines',
  );
  assert.is(
    (await ctx.sp.ok(ctx.alice, 'GET', '/api/push/subscriptions')).subscriptions.length,
    1,
    'a refusal is not the push service saying gone',
  );
});

test.run();
