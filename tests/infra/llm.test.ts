// The model-provider adapters over real HTTP against local servers speaking each protocol
// (tests/doubles/model-server.ts): request shapes (system prompt, messages, tools, headers),
// usage and cost, the retry policy (Retry-After in seconds and as a date, the ceiling, full
// jitter, 429/503/529), overloads after the last attempt, timeouts, malformed answers, and the
// key never appearing in an error. The waits are recorded, not slept.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { LlmConfig } from '../../infra/config.ts';
import { backoffMs, retryAfterMs } from '../../infra/llm/http.ts';
import { createModels, ModelError, type ModelRequest } from '../../infra/llm/index.ts';
import { LOCAL_DONT_KNOW } from '../../infra/llm/local.ts';
import { BUILT_IN_PRICES, Prices } from '../../infra/llm/pricing.ts';
import { createLogger } from '../../infra/logging.ts';
import { completion, ModelServer, type Protocol } from '../doubles/model-server.ts';

const KEY = 'sk-test-secret-key-must-never-leak-0123456789';

const request = (over: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'gpt-4o-mini',
  system: 'You are a test bot.',
  messages: [{ role: 'user', content: 'Hello?' }],
  max_tokens: 100,
  temperature: 0.5,
  ...over,
});

function setup(protocol: Protocol, server: ModelServer, over: Partial<LlmConfig> = {}) {
  const waits: number[] = [];
  const lines: string[] = [];
  const config: LlmConfig = {
    provider: protocol,
    baseUrl: server.baseUrl,
    apiKey: KEY,
    pricesFile: null,
    retryMax: 3,
    retryCeilMs: 8000,
    timeoutMs: 2000,
    ...over,
  };
  const models = createModels(config, createLogger({ sink: (l) => lines.push(l) }), {
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 0.5,
  });
  return { models, waits, lines };
}

async function failure(work: Promise<unknown>): Promise<ModelError> {
  try {
    await work;
  } catch (error) {
    assert.instance(error, ModelError);
    assert.not.ok((error as Error).message.includes(KEY), 'the key appears in an error');
    return error as ModelError;
  }
  throw new Error('expected a ModelError');
}

for (const protocol of ['openai', 'anthropic'] as const) {
  const test = suite<{ server: ModelServer }>(`model provider: ${protocol}`);
  test.before(async (ctx) => {
    ctx.server = await new ModelServer(protocol).start();
  });
  test.before.each(({ server }) => server.reset());
  test.after(async ({ server }) => server.stop());

  test("sends the system prompt, the messages and the key in the protocol's shape; reads text and usage", async ({
    server,
  }) => {
    const { models } = setup(protocol, server);
    const call = await models.complete(
      request({
        model: protocol === 'openai' ? 'gpt-4o-mini' : 'claude-3-5-haiku-20241022',
        messages: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'answer' },
          { role: 'user', content: 'second' },
        ],
      }),
    );
    assert.is(call.text, 'Hello from the test model.');
    assert.equal(call.usage, { input: 42, output: 7, cache_read: 10 });
    const got = server.last();
    if (protocol === 'openai') {
      assert.is(got.headers.authorization, `Bearer ${KEY}`);
      assert.equal(got.body.messages, [
        { role: 'system', content: 'You are a test bot.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: 'second' },
      ]);
      assert.is(got.body.max_tokens, 100);
      // gpt-4o-mini: 15 / 60 / 7.5 cents per million: (32 × 15 + 10 × 7.5 + 7 × 60) / 1e6
      assert.is(call.cost_cents, (32 * 15 + 10 * 7.5 + 7 * 60) / 1e6);
    } else {
      assert.is(got.headers['x-api-key'], KEY);
      assert.is(got.headers['anthropic-version'], '2023-06-01');
      assert.is(got.body.system, 'You are a test bot.');
      assert.equal(got.body.messages, [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: 'second' },
      ]);
      assert.is(call.cost_cents, (32 * 80 + 10 * 8 + 7 * 400) / 1e6);
    }
  });

  test("tools: offered in the protocol's format, calls read back, results sent as tool messages", async ({
    server,
  }) => {
    const { models } = setup(protocol, server);
    server.answer({
      body:
        protocol === 'openai'
          ? {
              choices: [
                {
                  message: {
                    role: 'assistant',
                    content: null,
                    tool_calls: [
                      { id: 'call_1', type: 'function', function: { name: 'post', arguments: '{"channel":"c1"}' } },
                    ],
                  },
                  finish_reason: 'tool_calls',
                },
              ],
              usage: { prompt_tokens: 5, completion_tokens: 3 },
            }
          : {
              content: [{ type: 'tool_use', id: 'toolu_1', name: 'post', input: { channel: 'c1' } }],
              stop_reason: 'tool_use',
              usage: { input_tokens: 5, output_tokens: 3 },
            },
    });
    const tools = [
      {
        name: 'post',
        description: 'post a message',
        parameters: { type: 'object', properties: { channel: { type: 'string' } } },
      },
    ];
    const call = await models.complete(request({ tools }));
    assert.is(call.stop, 'tool_calls');
    assert.equal(
      call.tool_calls.map((t) => [t.name, t.arguments]),
      [['post', { channel: 'c1' }]],
    );
    const sent = server.last().body;
    if (protocol === 'openai') assert.equal(sent.tools, [{ type: 'function', function: tools[0] }]);
    else
      assert.equal(sent.tools, [{ name: 'post', description: 'post a message', input_schema: tools[0]!.parameters }]);

    await models.complete(
      request({
        tools,
        messages: [
          { role: 'user', content: 'post it' },
          { role: 'assistant', content: '', tool_calls: call.tool_calls },
          { role: 'tool', tool_call_id: call.tool_calls[0]!.id, content: '{"ok":true}' },
        ],
      }),
    );
    const followUp = server.last().body.messages;
    if (protocol === 'openai') {
      assert.equal(followUp.at(-1), { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' });
      assert.is(followUp.at(-2).tool_calls[0].function.arguments, '{"channel":"c1"}');
    } else {
      assert.equal(followUp.at(-1), {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '{"ok":true}' }],
      });
      assert.equal(followUp.at(-2).content, [
        { type: 'tool_use', id: 'toolu_1', name: 'post', input: { channel: 'c1' } },
      ]);
    }
  });

  test('429 with Retry-After (seconds), then 529 with an HTTP date: waits honoured, third attempt answers', async ({
    server,
  }) => {
    const { models, waits } = setup(protocol, server);
    server.answer(
      { status: 429, headers: { 'retry-after': '2' } },
      { status: 529, headers: { 'retry-after': new Date(Date.now() + 3000).toUTCString() } },
    );
    const call = await models.complete(request());
    assert.is(call.text, 'Hello from the test model.');
    assert.is(server.received.length, 3);
    assert.is(waits[0], 2000);
    assert.ok(waits[1]! > 1000 && waits[1]! <= 3000, `date wait ${waits[1]}`);
  });

  test('Retry-After is capped at the ceiling; without one, full jitter below the exponential bound', async ({
    server,
  }) => {
    const { models, waits } = setup(protocol, server, { retryCeilMs: 1500 });
    server.answer({ status: 503, headers: { 'retry-after': '60' } }, { status: 503 });
    await models.complete(request());
    assert.equal(waits, [1500, backoffMs(2, null, { ceilMs: 1500, random: () => 0.5 })]);
    assert.is(waits[1], 250); // 0.5 × 250 × 2^1
  });

  test('still overloaded after the last attempt: overloaded, with the seconds to wait', async ({ server }) => {
    const { models, waits } = setup(protocol, server, { retryMax: 3 });
    server.answer(
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 429, headers: { 'retry-after': '1' } },
      { status: 429, headers: { 'retry-after': '4' } },
    );
    const error = await failure(models.complete(request()));
    assert.is(error.kind, 'overloaded');
    assert.is(error.retryAfterSeconds, 4);
    assert.is(server.received.length, 3);
    assert.equal(waits, [1000, 1000]);
  });

  test('a 500, a 401, a timeout, an unreachable server and malformed answers are unavailable, not retried', async ({
    server,
  }) => {
    const { models } = setup(protocol, server);
    server.answer({ status: 500, body: { error: { message: `bad key ${KEY}` } } });
    assert.is((await failure(models.complete(request()))).kind, 'unavailable');
    assert.is(server.received.length, 1);
    server.answer({ status: 401, body: { error: 'invalid x-api-key' } });
    assert.is((await failure(models.complete(request()))).kind, 'unavailable');
    server.answer({ stall: true });
    const impatient = setup(protocol, server, { timeoutMs: 200 });
    assert.match((await failure(impatient.models.complete(request()))).message, /did not answer within 200 ms/);
    server.answer({ raw: '{"choices": [' });
    assert.match((await failure(models.complete(request()))).message, /not JSON/);
    server.answer({ body: { unexpected: true } });
    assert.match((await failure(models.complete(request()))).message, /malformed/);
    const gone = setup(protocol, server, { baseUrl: 'http://127.0.0.1:9' });
    assert.match((await failure(gone.models.complete(request()))).message, /cannot be reached/);
  });

  test.run();
}

const local = suite('model provider: local');

test_local();
function test_local() {
  const models = createModels(
    {
      provider: 'local',
      baseUrl: null,
      apiKey: null,
      pricesFile: null,
      retryMax: 3,
      retryCeilMs: 8000,
      timeoutMs: 1000,
    },
    createLogger({ sink: () => {} }),
  );
  local('answers from the best grounding snippet, says it does not know, or names the profile; cost 0', async () => {
    const grounded = await models.complete(
      request({
        model: 'local',
        hints: {
          persona: 'Helper',
          grounding: [
            { title: 'Opening hours', content: 'We open at 9.' },
            { title: 'Other', content: 'x' },
          ],
        },
      }),
    );
    assert.is(grounded.text, 'From "Opening hours": We open at 9.');
    assert.is(grounded.cost_cents, 0);
    assert.ok(grounded.usage.input > 0 && grounded.usage.output > 0);
    assert.is(
      (await models.complete(request({ model: 'local', hints: { grounding: 'none_found' } }))).text,
      LOCAL_DONT_KNOW,
    );
    assert.match(
      (await models.complete(request({ model: 'local', hints: { persona: 'Helper' } }))).text,
      /^Helper here/,
    );
    // Deterministic: the same request gives the same reply and counts.
    assert.equal(
      await models.complete(request({ model: 'local' })),
      await models.complete(request({ model: 'local' })),
    );
    // The local provider answers every model offline (no network provider configured).
    assert.is(
      (await models.complete(request({ model: 'gpt-4o' }))).text,
      'This assistant here, answering with the offline local model.',
    );
  });

  local('prices: longest prefix, file overrides, unpriced costs 0 and warns once; local cannot spend', async () => {
    const prices = new Prices({ ...BUILT_IN_PRICES, 'my-model': { input: 100, output: 200, cache_read: 0 } });
    assert.equal(prices.of('gpt-4o-mini-2024-07-18'), BUILT_IN_PRICES['gpt-4o-mini']);
    assert.equal(prices.of('gpt-4o-2024-08-06'), BUILT_IN_PRICES['gpt-4o']);
    assert.is(prices.costCents('my-model', { input: 1_000_000, output: 500_000, cache_read: 0 }), 200);
    assert.is(prices.costCents('unknown-model', { input: 1_000_000, output: 1, cache_read: 0 }), 0);
    const lines: string[] = [];
    const m = createModels(
      {
        provider: 'local',
        baseUrl: null,
        apiKey: null,
        pricesFile: null,
        retryMax: 3,
        retryCeilMs: 8000,
        timeoutMs: 1000,
      },
      createLogger({ sink: (l) => lines.push(l) }),
    );
    await m.complete(request({ model: 'mystery' }));
    await m.complete(request({ model: 'mystery' }));
    assert.is(lines.filter((l) => l.includes('model_unpriced')).length, 1);
    assert.not.ok(m.canSpend('local'));
    assert.not.ok(m.canSpend('mystery'));
    assert.ok(m.canSpend('gpt-4o'));
  });

  local('Retry-After parsing: seconds, HTTP dates, garbage', () => {
    assert.is(retryAfterMs('3'), 3000);
    assert.is(retryAfterMs(new Date(10_000).toUTCString(), 4000), 6000);
    assert.is(retryAfterMs('soon'), null);
    assert.is(retryAfterMs(null), null);
  });

  local('the completion double speaks both shapes', () => {
    assert.ok((completion('openai', 'x') as { choices: unknown[] }).choices.length === 1);
  });
}

local.run();
