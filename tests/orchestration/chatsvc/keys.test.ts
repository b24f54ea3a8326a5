// The bot's signed prekey on the supervisor's timer: a week later (the platform's clock moved) a
// new one is published, and a DM begun from a bundle fetched before the rotation still opens
// (the old signed prekey is kept 30 days).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chatsvcConnector } from '../../../main/apps.ts';
import { registerChat, uniqueName } from '../../support/chat.ts';
import { connectorLog, connectorWorld, Human, type ConnectorWorld } from '../../support/chatsvc.ts';
import { http } from '../../support/services.ts';
import { until } from '../../support/until.ts';

interface Ctx {
  w: ConnectorWorld;
}
const test = suite<Ctx>('chatsvc: signed-prekey rotation');

test.before(async (ctx) => {
  ctx.w = await connectorWorld('chatsvc_keys');
});
test.after(async ({ w }) => {
  w?.human.ws.close();
  await w?.s.close();
});

const DAY_MS = 86_400_000;

test('a week on, the supervisor publishes a new signed prekey; a DM begun against the old one is still answered', async ({
  w,
}) => {
  const old = await w.spaces.ok(w.human.account, 'GET', `/api/keys/${w.bot.id}/bundle`);
  const oldId = old.signed_prekey.key_id;

  // Six days: the supervisor's pass leaves the signed prekey alone.
  w.s.clock.advance(6 * DAY_MS);
  const connector = chatsvcConnector(w.s.platform);
  await connector.supervisor.tick();
  const early = new Human(w.spaces, await registerChat(w.s.chat, uniqueName('early')));
  await new Promise((r) => setTimeout(r, 500));
  assert.is((await w.spaces.ok(early.account, 'GET', `/api/keys/${w.bot.id}/bundle`)).signed_prekey.key_id, oldId);

  // Eight days: rotated.
  w.s.clock.advance(2 * DAY_MS);
  await connector.supervisor.tick();
  const late = new Human(w.spaces, await registerChat(w.s.chat, uniqueName('late')));
  await until(
    () => `the signed prekey rotated\n${connectorLog(w.s)}`,
    async () => (await w.spaces.ok(late.account, 'GET', `/api/keys/${w.bot.id}/bundle`)).signed_prekey.key_id !== oldId,
    15_000,
    200,
  );

  // A DM begun from the bundle fetched a week ago (its one-time prekey too): the bot still opens it.
  // (The owner's access token expired with the week: log in again.)
  const login = await http(`${w.s.chat}/api/auth/login`, {
    json: { username: w.owner.username, password: w.owner.password },
  });
  assert.is(login.status, 200, login.text);
  w.owner.access = login.body.access_token;
  await w.spaces.join(w.community, w.owner, [late.account]);
  await late.connect();
  const dm = await late.openDm(w.bot.id);
  await late.subscribe(dm);
  late.startDm(old);
  await late.sendDm(dm, w.bot.id, 'Lisbon hours, from an old bundle?');
  try {
    assert.match(late.decryptDm((await late.botMessage(dm, w.bot.id)).ciphertext), /half past eight/);
  } finally {
    late.ws.close();
  }
});

test.run();
