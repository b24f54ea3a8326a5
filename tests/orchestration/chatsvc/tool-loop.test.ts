// The tool loop of the chat pipeline (spec 1: "Agent runtime tool loop"): at most MAX_ITERATIONS
// model calls, each checked against and counted in the daily cost cap; tool errors and invalid
// arguments go back to the model as results; one tool_loop_completed audit row per run; an
// OpenAI-compatible server asking for tools, and the local model's `/tool` lines.

import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_ITERATIONS, runTurn, type TurnRequest } from '../../../api/orchestration/agent-chat/commands.ts';
import { modelToolSpecs } from '../../../api/orchestration/chatsvc/tools.ts';
import { orchDeps } from '../../../main/apps.ts';
import { profileById } from '../../../projections/orchestration/profiles.ts';
import { completion, startOpenAiServer, type OpenAiServer } from '../../support/openai-server.ts';
import { startTestApps, type TestServices } from '../../support/services.ts';
import { auditEntries, makeProfile } from '../agent-chat/helpers.ts';

const ADMIN_KEY = 'orch_toolloop-admin-key-000000000000000';
interface Ctx {
  s: TestServices;
  server: OpenAiServer;
  mode: { loop: boolean; badArgs: boolean };
}
const test = suite<Ctx>('chatsvc: tool loop');

test.before(async (ctx) => {
  ctx.mode = { loop: true, badArgs: false };
  ctx.server = await startOpenAiServer((body) => {
    const last = body.messages[body.messages.length - 1];
    if (ctx.mode.loop || last.role !== 'tool') {
      const args = ctx.mode.badArgs ? { channel_id: 'not-a-uuid' } : { channel_id: randomUUID(), content: 'hello' };
      return {
        body: completion({
          toolCalls: [{ id: `call_${body.messages.length}`, name: 'chatsvc_send_message', arguments: args }],
          usage: [1000, 10],
        }),
      };
    }
    return {
      body: completion({
        text: `done after ${body.messages.filter((m: any) => m.role === 'tool').length} tool results`,
        usage: [1000, 10],
      }),
    };
  });
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-toolloop-'));
  const prices = path.join(dir, 'prices.json');
  // 1000 input tokens cost 1000 cents on `pricey`.
  await writeFile(
    prices,
    JSON.stringify({
      pricey: { input: 1_000_000, output: 0, cache_read: 0 },
      cheap: { input: 1, output: 1, cache_read: 0 },
    }),
  );
  ctx.s = await startTestApps('chatsvc_toolloop', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_LLM_PROVIDER: 'openai',
    ORCH_LLM_BASE_URL: ctx.server.url,
    ORCH_LLM_API_KEY: 'sk-test',
    ORCH_LLM_PRICES_FILE: prices,
  });
});
test.after(async ({ s, server }) => {
  await s?.close();
  await server?.close();
});

async function turn(
  s: TestServices,
  profileId: string,
  message: string,
  execute: (name: string, args: Record<string, unknown>) => Promise<string>,
) {
  const deps = orchDeps(s.platform);
  const profile = (await profileById(deps.db, profileId))!;
  const request: TurnRequest = {
    surface: 'private',
    kind: 'private',
    clientLimit: null,
    caller: 'account:test',
    profile: async () => profile,
    owner: { kind: 'account', id: randomUUID() },
    visitorId: null,
    conversationId: null,
    message,
    maxChars: 4000,
    context: { actor: { kind: 'user', id: null }, correlationId: randomUUID() },
    tools: async () => ({ specs: modelToolSpecs(), execute: (call) => execute(call.name, call.arguments) }),
  };
  return runTurn(deps, request);
}

const lastLoopRow = async (s: TestServices) =>
  (await auditEntries(s, ADMIN_KEY)).find((e) => e.event_type === 'tool_loop_completed');

test('the tool specs come from the zod schemas', () => {
  const specs = modelToolSpecs();
  assert.equal(
    specs.map((t) => t.name),
    ['chatsvc_send_message', 'chatsvc_create_channel', 'chatsvc_invite_member'],
  );
  const send = specs[0]!.parameters as any;
  assert.is(send.type, 'object');
  assert.equal(send.required.sort(), ['channel_id', 'content']);
  assert.is(send.properties.content.maxLength, 4000);
  assert.is(send.additionalProperties, false);
});

test('a model that keeps calling tools stops after MAX_ITERATIONS model calls; one audit row', async ({
  s,
  server,
  mode,
}) => {
  mode.loop = true;
  const profile = await makeProfile(s, ADMIN_KEY, { slug: 'looper', model: 'cheap', cost_cap_daily_cents: 1000 });
  server.requests.length = 0;
  let calls = 0;
  const result = await turn(s, profile.id, 'go', async () => {
    calls += 1;
    return '{"ok":true}';
  });
  assert.is(server.requests.length, MAX_ITERATIONS);
  assert.is(calls, MAX_ITERATIONS);
  assert.ok(result.message.length > 0);
  assert.ok(server.requests[0]!.tools.some((t: any) => t.function.name === 'chatsvc_send_message'));
  const row = await lastLoopRow(s);
  assert.equal(
    { ...row.detail, cost_cents: undefined },
    {
      surface: 'private',
      tool_calls: 10,
      model_calls: 10,
      cost_cents: undefined,
      hit_cap: false,
      hit_max_iterations: true,
    },
  );
  assert.is(row.severity, 'info');
});

test('every model call is checked against the cost cap and counted in it', async ({ s, server, mode }) => {
  mode.loop = true;
  const profile = await makeProfile(s, ADMIN_KEY, { slug: 'capped-loop', model: 'pricey', cost_cap_daily_cents: 1500 });
  server.requests.length = 0;
  const result = await turn(s, profile.id, 'go', async () => '{"ok":true}');
  assert.is(server.requests.length, 2, 'the third call would start at 2000 cents >= 1500');
  assert.is(result.cost_cents, 2000);
  const row = await lastLoopRow(s);
  assert.is(row.detail.hit_cap, true);
  assert.is(row.detail.hit_max_iterations, false);
  assert.is(row.detail.model_calls, 2);
});

test('tool errors go back to the model as results; the loop ends with its text', async ({ s, server, mode }) => {
  mode.loop = false;
  const profile = await makeProfile(s, ADMIN_KEY, { slug: 'erring', model: 'cheap', cost_cap_daily_cents: 1000 });
  server.requests.length = 0;
  const result = await turn(s, profile.id, 'go', async () => {
    throw new Error('the chat service is down');
  });
  assert.is(result.message, 'done after 1 tool results');
  const toolMessage = server.requests[1]!.messages.find((m: any) => m.role === 'tool');
  assert.match(toolMessage.content, /the chat service is down/);
  assert.is((await lastLoopRow(s)).detail.tool_calls, 1);
});

test('the local model calls a tool for a /tool line (offline)', async ({ s }) => {
  const profile = await makeProfile(s, ADMIN_KEY, { slug: 'offline-tools', model: 'local' });
  const seen: Record<string, unknown>[] = [];
  const channel = randomUUID();
  const result = await turn(
    s,
    profile.id,
    `please post\n/tool chatsvc_send_message {"channel_id":"${channel}","content":"from the loop"}`,
    async (name, args) => {
      seen.push({ name, ...args });
      return JSON.stringify({ ok: true, tool: 'send_message', target_id: channel });
    },
  );
  assert.equal(seen, [{ name: 'chatsvc_send_message', channel_id: channel, content: 'from the loop' }]);
  assert.match(result.message, /^Tool chatsvc_send_message: /);
  const row = await lastLoopRow(s);
  assert.is(row.detail.model_calls, 2);
  assert.is(row.detail.tool_calls, 1);
});

test.run();
