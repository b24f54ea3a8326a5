// Every caller of a multi-stream write, with the log on the EventStoreDB test double, where
// `appendMany` is a sequence of single appends that can stop half way (the double's fault hook
// refuses the chosen streams with UNAVAILABLE). Each test stops a write half way, lets the caller
// retry as it would (the scheduler's next firing, the poster's page handed over again, the
// client's next request) and checks that every intended effect is in the log exactly once.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { documentIdOf } from '../../domain/orchestration/estate/decider.ts';
import type { ChatBackground } from '../../main/chat-background.ts';
import { startEsdbTestServer, type EsdbTestServer } from '../doubles/esdb-test-server.ts';
import { clientKeys, registrationBody, uniqueName, type ChatAccount } from '../support/chat.ts';
import { interactive, REGISTRY_ENV } from '../support/registry.ts';
import { backgroundOf } from '../support/schedule.ts';
import { http, startTestApps, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';
import { chatUserStream, keysStream, messageStream, scheduledStream } from '../../domain/chat/streams.ts';
import { estateDocumentStream, userStream } from '../../domain/orchestration/streams.ts';
import { customerStream } from '../../domain/registry/streams.ts';

const ADMIN_KEY = `admin-${randomUUID()}`;

interface Ctx {
  server: EsdbTestServer;
  s: TestServices;
  sp: Spaces;
  bg: ChatBackground;
  owner: ChatAccount;
  ann: ChatAccount;
  chid: string;
}
const test = suite<Ctx>('half-way multi-stream writes (EventStoreDB double)');
test.before(async (ctx) => {
  ctx.server = await startEsdbTestServer();
  ctx.s = await startTestApps('half_way_esdb', {
    ...REGISTRY_ENV,
    ADMIN_API_KEY: ADMIN_KEY,
    EVENTSTORE_URL: ctx.server.url,
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.bg = backgroundOf(ctx.s.platform);
  ctx.owner = await ctx.sp.register('own');
  ctx.ann = await ctx.sp.register('ann');
  const cid = await ctx.sp.community(ctx.owner);
  await ctx.sp.join(cid, ctx.owner, [ctx.ann]);
  const gid = await ctx.sp.group(ctx.owner, cid);
  await ctx.sp.ok(ctx.ann, 'POST', `/api/groups/${gid}/join`);
  ctx.chid = await ctx.sp.channel(ctx.owner, gid, [ctx.ann]);
});
test.after(async ({ s, bg, server }) => {
  if (server) server.faults.failAppend = undefined;
  await bg?.stop();
  await s?.close();
  await server?.stop();
});

/**
 * Refuse the second append to a stream with this prefix, and every later append to that same
 * stream until `heal()`: a write of several streams stops half way and that stream stays down.
 */
function downAfterFirst(server: EsdbTestServer, prefix: string): { doomed(): string | null; heal(): void } {
  let seen = 0;
  let doomed: string | null = null;
  server.faults.failAppend = (stream) => {
    if (!stream.startsWith(prefix)) return false;
    if (doomed === null && ++seen === 2) doomed = stream;
    return stream === doomed;
  };
  return { doomed: () => doomed, heal: () => void (server.faults.failAppend = undefined) };
}

const types = async (s: TestServices, stream: string) => (await s.platform.store.readStream(stream)).map((e) => e.type);

test('scheduler: a batch firing stopped half way fires the rest at the next firing, each message delivered and posted once', async ({
  server,
  s,
  sp,
  bg,
  ann,
  chid,
}) => {
  const sendAt = new Date(s.clock.now().getTime() + 30_000).toISOString();
  const ids: string[] = [];
  for (let i = 0; i < 4; i++)
    ids.push(
      (
        await sp.ok(
          ann,
          'POST',
          '/api/messages/schedule',
          { channel_id: chid, ciphertext: `later ${i}`, send_at: sendAt },
          201,
        )
      ).id,
    );
  s.clock.advance(31_000);

  // Firing: the second scheduled stream appended stays down; the others are delivered.
  const firing = downAfterFirst(server, 'chat.scheduled_message-');
  await bg.scheduler.tick();
  firing.heal();
  const down = ids.find((id) => scheduledStream(id) === firing.doomed());
  assert.ok(down, 'the firing stopped half way');
  for (const id of ids) {
    const delivered = (await types(s, scheduledStream(id))).filter((t) => t === 'ScheduledMessageDelivered').length;
    assert.is(delivered, id === down ? 0 : 1, id);
  }

  // Posting: the second message stream appended stays down; the reactor keeps its page.
  const posting = downAfterFirst(server, 'chat.message-');
  await bg.poster.drain().then(
    () => assert.unreachable('the page failed'),
    () => {},
  );
  posting.heal();
  assert.ok(posting.doomed(), 'the posting stopped half way');

  // The next firing (after the failed job's back-off) and the page handed over again complete it.
  s.clock.advance(6_000);
  await bg.settle();
  await bg.settle();
  for (const id of ids) {
    assert.equal(
      (await types(s, scheduledStream(id))).filter((t) => t === 'ScheduledMessageDelivered').length,
      1,
      `${id} delivered once`,
    );
    assert.equal(await types(s, messageStream(id)), ['MessagePosted'], `${id} posted once`);
  }
});

test('estate ingest: a group of documents stopped half way stores the others; the document left out is stored by the next ingest; one event each', async ({
  server,
  s,
}) => {
  const docs = Array.from({ length: 5 }, (_, i) => ({
    source_repo: 'halfway',
    path: `docs/d-${i}.md`,
    content: `document number ${i}`,
  }));
  const streams = docs.map((d) => estateDocumentStream(documentIdOf(d.source_repo, d.path)));
  const headers = { 'X-API-Key': ADMIN_KEY };
  const fault = downAfterFirst(server, 'orch.estate_document-');
  const first = await http(`${s.orch}/api/v1/knowledge/ingest`, { headers, json: { documents: docs } });
  fault.heal();
  assert.is(first.status, 200, first.text);
  const down = streams.indexOf(fault.doomed()!);
  assert.ok(down >= 0, 'the group stopped half way');
  assert.equal(
    first.body.results.map((r: { status: string }) => r.status),
    docs.map((_, i) => (i === down ? 'failed' : 'created')),
  );
  assert.equal(
    first.body.failures.map((f: { index: number; error: string }) => [f.index, f.error]),
    [[down, 'store_failed']],
  );
  // Read-your-writes held for the documents written before the failure too.
  const listed = await http(`${s.orch}/api/v1/knowledge/corpus/paths?source_repo=halfway`, { headers });
  assert.is(listed.body.paths.length, 4);

  const again = await http(`${s.orch}/api/v1/knowledge/ingest`, { headers, json: { documents: docs } });
  assert.is(again.status, 200, again.text);
  assert.equal(
    again.body.results.map((r: { status: string }) => r.status),
    docs.map((_, i) => (i === down ? 'created' : 'unchanged')),
  );
  for (const stream of streams) assert.equal(await types(s, stream), ['EstateDocumentIngested'], stream);
});

test('registry: a customer whose creation failed after its slug was reserved is created by the retry; one reservation, one customer', async ({
  server,
  s,
}) => {
  const admin = await interactive(s, 'ada', 'admin');
  const url = `${s.registry}/api/v1/customers`;
  server.faults.failAppend = (stream) => stream.startsWith('registry.customer-');
  const failed = await http(url, { headers: admin.headers, json: { slug: 'halfway', name: 'Half Way' } });
  server.faults.failAppend = undefined;
  assert.ok(failed.status >= 500, `${failed.status} ${failed.text}`);
  const retried = await http(url, { headers: admin.headers, json: { slug: 'halfway', name: 'Half Way' } });
  assert.is(retried.status, 201, retried.text);
  assert.is((await http(`${url}/halfway`, { headers: admin.headers })).body.id, retried.body.id);
  const reservation = await s.platform.store.readStream('registry.customer_slug_reservation-halfway');
  assert.equal(
    reservation.map((e) => [e.type, e.data.owner_id]),
    [['UniqueValueReserved', retried.body.id]],
  );
  assert.equal(await types(s, customerStream(retried.body.id)), ['CustomerCreated']);
  // Taken for good now: another creation of the slug is the 409.
  const taken = await http(url, { headers: admin.headers, json: { slug: 'halfway', name: 'Other' } });
  assert.is(taken.status, 409);
  assert.is(taken.body.error.code, 'customer_slug_taken');
});

test('registry leads: a capture that failed after reserving its e-mail and slug is completed by the next capture of that e-mail, under the same slug', async ({
  server,
  s,
}) => {
  const admin = await interactive(s, 'ada', 'admin');
  const lead = () =>
    http(`${s.registry}/api/v1/leads`, {
      headers: admin.headers,
      json: { name: 'Half Lead', email: 'half.lead@example.test' },
    });
  server.faults.failAppend = (stream) => stream.startsWith('registry.customer-');
  const failed = await lead();
  server.faults.failAppend = undefined;
  assert.ok(failed.status >= 500, `${failed.status} ${failed.text}`);
  const retried = await lead();
  assert.is(retried.status, 201, retried.text);
  assert.is(retried.body.slug, 'half-lead', 'the slug the failed capture reserved, not half-lead-2');
  const slug = await s.platform.store.readStream('registry.customer_slug_reservation-half-lead');
  assert.equal(
    slug.map((e) => e.data.owner_id),
    [retried.body.id],
  );
  assert.equal(await types(s, customerStream(retried.body.id)), ['CustomerCreated']);
  const again = await lead();
  assert.is(again.status, 200, 'the same e-mail answers the customer');
  assert.is(again.body.id, retried.body.id);
});

test('orchestration accounts: a creation that failed after reserving its username and e-mail is completed by the retry; taken for good afterwards', async ({
  server,
  s,
}) => {
  const url = `${s.orch}/api/v1/admin/users`;
  const body = {
    username: 'half-way',
    email: 'half.way@example.test',
    role: 'user',
    password: 'a long enough password',
  };
  server.faults.failAppend = (stream) => stream.startsWith('orch.user-');
  const failed = await http(url, { headers: { 'X-API-Key': ADMIN_KEY }, json: body });
  server.faults.failAppend = undefined;
  assert.ok(failed.status >= 500, `${failed.status} ${failed.text}`);
  const retried = await http(url, { headers: { 'X-API-Key': ADMIN_KEY }, json: body });
  assert.is(retried.status, 201, retried.text);
  const username = await s.platform.store.readStream('orch.username_reservation-half-way');
  assert.equal(
    username.map((e) => e.data.owner_id),
    [retried.body.id],
  );
  assert.equal(await types(s, userStream(retried.body.id)), ['UserCreated']);
  const taken = await http(url, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { ...body, email: 'other@example.test' },
  });
  assert.is(taken.status, 409, taken.text);
});

test('chat bots: a bot whose creation failed after its username was reserved is created by the retry', async ({
  server,
  s,
  sp,
  owner,
}) => {
  server.faults.failAppend = (stream) => stream.startsWith('chat.user-');
  const failed = await sp.call(owner, 'POST', '/api/admin/bots', { username: 'halfbot' });
  server.faults.failAppend = undefined;
  assert.ok(failed.status >= 500, `${failed.status} ${failed.text}`);
  const bot = await sp.ok(owner, 'POST', '/api/admin/bots', { username: 'halfbot' }, 201);
  const reservation = await s.platform.store.readStream('chat.username_reservation-halfbot');
  assert.equal(
    reservation.map((e) => e.data.owner_id),
    [bot.id],
  );
  assert.equal(await types(s, chatUserStream(bot.id)), ['BotRegistered']);
  assert.is((await sp.call(owner, 'POST', '/api/admin/bots', { username: 'halfbot' })).status, 409);
});

test('chat registration: a registration that failed after its reservations and keys is completed by the same request again', async ({
  server,
  s,
}) => {
  const body = registrationBody(uniqueName('half'), clientKeys());
  server.faults.failAppend = (stream) => stream.startsWith('chat.user-');
  const failed = await http(`${s.chat}/api/auth/register`, { json: body });
  server.faults.failAppend = undefined;
  assert.ok(failed.status >= 500, `${failed.status} ${failed.text}`);
  const retried = await http(`${s.chat}/api/auth/register`, { json: body });
  assert.is(retried.status, 201, retried.text);
  const id = retried.body.user.id as string;
  const username = await s.platform.store.readStream(`chat.username_reservation-${body.username.toLowerCase()}`);
  assert.equal(
    username.map((e) => e.data.owner_id),
    [id],
  );
  assert.equal(await types(s, chatUserStream(id)), ['UserRegistered']);
  assert.equal(
    (await types(s, keysStream(id))).filter((t) => t === 'IdentityKeyRegistered'),
    ['IdentityKeyRegistered'],
  );
  const login = await http(`${s.chat}/api/auth/login`, { json: { username: body.username, password: body.password } });
  assert.is(login.status, 200, login.text);
});

test.run();
