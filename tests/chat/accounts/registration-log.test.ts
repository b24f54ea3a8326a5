// What a chat registration writes to the log: on a store that appends several streams in one
// transaction (PostgreSQL) a refused registration writes nothing, not even its username's
// reservation; a username reserved by a registration that never finished (half way, on
// EventStoreDB or before the one-transaction way) is still completed under that reservation's id.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { CHAT_STREAMS, chatUserStream } from '../../../domain/chat/streams.ts';
import { reservationStream } from '../../../domain/shared/reservation.ts';
import { toAppend } from '../../../infra/commands.ts';
import { clientKeys, expectError, registrationBody, uniqueName } from '../../support/chat.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

interface Ctx {
  s: TestServices;
}
const test = suite<Ctx>('chat registration: what it writes to the log');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_registration_log', { CHATSVC_AUTH_RATE_PER_MIN: '100000' });
});
test.after(async ({ s }) => s?.close());

const types = async (s: TestServices, stream: string) => (await s.platform.store.readStream(stream)).map((e) => e.type);

test('a registration refused for its e-mail leaves its username free (one transaction where the store allows it)', async ({
  s,
}) => {
  const first = registrationBody(uniqueName('mail'), clientKeys());
  assert.is((await http(`${s.chat}/api/auth/register`, { json: first })).status, 201);
  const second = registrationBody(uniqueName('other'), clientKeys(), { email: first.email });
  const refused = await http(`${s.chat}/api/auth/register`, { json: second });
  expectError(refused, 409);
  assert.match(refused.body.error, /email/);
  const username = reservationStream(CHAT_STREAMS.username_reservation, second.username.toLowerCase());
  if (s.platform.commands.canRunTogether)
    assert.equal(await types(s, username), [], 'nothing written for the refused registration');
  // The username stays available either way.
  const again = await http(`${s.chat}/api/auth/register`, {
    json: { ...second, email: `${second.username.toLowerCase()}@example.test` },
  });
  assert.is(again.status, 201, again.text);
});

test("a username reserved by a registration that never finished is completed under the reservation's id; then taken", async ({
  s,
}) => {
  const body = registrationBody(uniqueName('orphan'), clientKeys());
  const ownerId = randomUUID();
  await s.platform.store.append(
    reservationStream(CHAT_STREAMS.username_reservation, body.username.toLowerCase()),
    [
      toAppend(
        { type: 'UniqueValueReserved', data: { kind: 'chat_username', owner_id: ownerId } },
        { actor: { kind: 'visitor', id: ownerId }, correlationId: null },
      ),
    ],
    { expected: 'no_stream' },
  );
  const r = await http(`${s.chat}/api/auth/register`, { json: body });
  assert.is(r.status, 201, r.text);
  assert.is(r.body.user.id, ownerId);
  assert.equal(await types(s, chatUserStream(ownerId)), ['UserRegistered']);
  const taken = await http(`${s.chat}/api/auth/register`, { json: { ...body, email: 'someone.else@example.test' } });
  expectError(taken, 409);
  assert.match(taken.body.error, /username/);
});

test.run();
