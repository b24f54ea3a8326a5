// The console's client-side checks of the chat-service connect form
// (web/console/src/chatsvc-rules.ts) agree with the server's: the connect route's body schema and
// the domain's instance URL rule. A value the console accepts the server accepts, and one it
// refuses the server refuses.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ConnectBody } from '../../../api/orchestration/chatsvc/routes.ts';
import { BOT_TOKEN, CHAT_USERNAME, instanceUrlProblem } from '../../../domain/orchestration/chatsvc/rules.ts';
import * as rules from '../../../web/console/src/chatsvc-rules.ts';

const test = suite('console: chat-service connect rules mirror the server');
const TOKEN = `cb_${'ab'.repeat(32)}`;
const valid = {
  instance_url: 'https://chat.example.org',
  provision_token: TOKEN,
  bot_username: 'office_bot',
  display_name: 'Office Bot',
};

test('the same patterns as the domain', () => {
  assert.is(rules.PROVISION_TOKEN.source, BOT_TOKEN.source);
  assert.is(rules.BOT_USERNAME.source, CHAT_USERNAME.source);
});

test('instance URLs: the console and the server agree', () => {
  for (const url of [
    'https://chat.example.org',
    'http://127.0.0.1:8080',
    'http://localhost:1',
    'http://[::1]:80',
    'http://chat.example.org',
    'ftp://x',
    'not a url',
    'https://',
  ]) {
    const console = rules.checkInstanceUrl(url) === null;
    const server = ConnectBody.safeParse({ ...valid, instance_url: url }).success && instanceUrlProblem(url) === null;
    assert.is(console, server, url);
  }
});

test('each field: a value the console accepts the server accepts, and the other way round', () => {
  const cases: [string, unknown, boolean][] = [];
  for (const t of [TOKEN, `cb_${'AB'.repeat(32)}`, `cb_${'a'.repeat(63)}`, '', 'token'])
    cases.push(['provision_token', t, rules.checkProvisionToken(t) === null]);
  for (const n of ['ab', 'abc', 'a'.repeat(32), 'a'.repeat(33), 'office-bot', 'Office_Bot_1'])
    cases.push(['bot_username', n, rules.checkBotUsername(n) === null]);
  for (const n of ['', 'x', 'n'.repeat(64), 'n'.repeat(65)])
    cases.push(['display_name', n, rules.checkDisplayName(n) === null]);
  for (const h of ['0', '1', '720', '87600', '87601', '1.5'])
    cases.push(['expires_in_hours', Number(h), 'value' in rules.checkExpiry(h)]);
  for (const [field, value, console] of cases) {
    const server = ConnectBody.safeParse({ ...valid, [field]: value }).success;
    assert.is(console, server, `${field} ${JSON.stringify(value)}: console ${console}, server ${server}`);
  }
  assert.equal(rules.checkExpiry(''), { value: undefined }, "empty: the server's default");
});

test('suggested usernames are valid, and a reconnect counts up', () => {
  for (const slug of ['office-bot', 'a', 'x'.repeat(60), 'support'])
    assert.ok(rules.checkBotUsername(rules.suggestUsername(slug)) === null, slug);
  assert.is(rules.nextUsername('office_bot'), 'office_bot_2');
  assert.is(rules.nextUsername('office_bot_2'), 'office_bot_3');
  assert.is(rules.nextUsername('b'.repeat(32)).length, 32);
});

test.run();
