// Stored sender-key states round-trip (the receiver keeps decrypting, duplicates included), and
// the local model's offline tool calls (`/tool <name> <json>`).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  createSenderKey,
  createSenderKeyReceiver,
  decryptGroup,
  deserializeSenderKey,
  deserializeSenderKeyReceiver,
  E2eeError,
  encryptGroup,
  senderKeyDistribution,
  serializeSenderKey,
  serializeSenderKeyReceiver,
} from '../../../crypto/e2ee/index.ts';
import { LocalProvider } from '../../../infra/llm/local.ts';

const test = suite('chatsvc: stored state and local tools');
const text = (s: string) => new TextEncoder().encode(s);
const read = (b: Uint8Array) => new TextDecoder().decode(b);

test('sender and receiver states survive serialisation mid-chain', () => {
  let sender = createSenderKey('11111111-1111-4111-8111-111111111111');
  let receiver = createSenderKeyReceiver(senderKeyDistribution(sender));
  const m0 = encryptGroup(sender, text('zero'));
  const m1 = encryptGroup(sender, text('one'));
  const m2 = encryptGroup(sender, text('two'));
  assert.is(read(decryptGroup(receiver, m2)), 'two');
  sender = deserializeSenderKey(serializeSenderKey(sender));
  receiver = deserializeSenderKeyReceiver(serializeSenderKeyReceiver(receiver));
  assert.is(read(decryptGroup(receiver, m0)), 'zero', 'a skipped key survived');
  assert.is(read(decryptGroup(receiver, m2)), 'two', 'a duplicate decrypts from the cache');
  const m3 = encryptGroup(sender, text('three'));
  assert.is(m3.message.iteration, 3);
  assert.is(read(decryptGroup(deserializeSenderKeyReceiver(serializeSenderKeyReceiver(receiver)), m3)), 'three');
  assert.is(read(decryptGroup(receiver, m1)), 'one');
  assert.throws(
    () => deserializeSenderKeyReceiver('{"version":2}'),
    (e: E2eeError) => e.code === 'invalid_session',
  );
  assert.throws(
    () => deserializeSenderKey(serializeSenderKeyReceiver(receiver)),
    (e: E2eeError) => e.code === 'invalid_session',
  );
});

test('the local model calls an offered tool for a /tool line, then answers from its result', async () => {
  const local = new LocalProvider();
  const tools = [{ name: 'chatsvc_send_message', description: 'x', parameters: { type: 'object' } }];
  const base = { model: 'local', system: 's', max_tokens: 100, temperature: 0, tools };
  const first = await local.complete({
    ...base,
    messages: [
      {
        role: 'user',
        content: 'please\n/tool chatsvc_send_message {"channel_id":"c","content":"hi"}\n/tool other {"x":1}',
      },
    ],
  });
  assert.is(first.stop, 'tool_calls');
  assert.is(first.tool_calls.length, 1, 'only offered tools');
  assert.equal(first.tool_calls[0]!.arguments, { channel_id: 'c', content: 'hi' });
  const second = await local.complete({
    ...base,
    messages: [
      { role: 'user', content: '/tool chatsvc_send_message {"channel_id":"c","content":"hi"}' },
      { role: 'assistant', content: '', tool_calls: first.tool_calls },
      { role: 'tool', tool_call_id: first.tool_calls[0]!.id, content: '{"ok":true}' },
    ],
  });
  assert.is(second.stop, 'end');
  assert.is(second.text, 'Tool chatsvc_send_message: {"ok":true}');
  const bad = await local.complete({
    ...base,
    messages: [{ role: 'user', content: '/tool chatsvc_send_message {not json}' }],
  });
  assert.ok('_invalid' in bad.tool_calls[0]!.arguments);
  const none = await local.complete({
    ...base,
    tools: undefined,
    messages: [{ role: 'user', content: '/tool chatsvc_send_message {}' }],
  });
  assert.is(none.tool_calls.length, 0, 'no tools offered: no calls');
});

test.run();
