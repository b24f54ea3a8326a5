// Rule 5's cost cap on the bot (spec 1, inbound answering): a priced model behind a local
// OpenAI-compatible server; once the day's spend reaches the cap, a DM gets the short canned
// reply, encrypted like any answer, and only once a minute per user.

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { COST_REPLY } from '../../../domain/orchestration/chatsvc/rules.ts';
import { connectorWorld, type ConnectorWorld } from '../../support/chatsvc.ts';
import { completion, startOpenAiServer, type OpenAiServer } from '../../support/openai-server.ts';
import { until } from '../../support/until.ts';

interface Ctx {
  w: ConnectorWorld;
  server: OpenAiServer;
  dm: string;
}
const test = suite<Ctx>('chatsvc: cost cap');

test.before(async (ctx) => {
  ctx.server = await startOpenAiServer(() => ({
    body: completion({ text: 'The Lisbon office opens at half past eight.', usage: [1000, 10] }),
  }));
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-chatsvc-cost-'));
  const prices = path.join(dir, 'prices.json');
  // 1000 input tokens cost 1000 cents: one answer spends past the 500-cent cap.
  await writeFile(prices, JSON.stringify({ pricey: { input: 1_000_000, output: 0, cache_read: 0 } }));
  ctx.w = await connectorWorld('chatsvc_cost', {
    env: {
      ORCH_LLM_PROVIDER: 'openai',
      ORCH_LLM_BASE_URL: ctx.server.url,
      ORCH_LLM_API_KEY: 'sk-test',
      ORCH_LLM_PRICES_FILE: prices,
    },
    profile: { model: 'pricey', cost_cap_daily_cents: 500, rate_limit_rpm: 1000 },
  });
  ctx.dm = await ctx.w.human.openDm(ctx.w.bot.id);
  await ctx.w.human.subscribe(ctx.dm);
});
test.after(async ({ w, server }) => {
  w?.human.ws.close();
  await w?.s.close();
  await server?.close();
});

test('past the daily cost cap: one short canned reply a minute, encrypted', async ({ w, dm }) => {
  await w.human.sendDm(dm, w.bot.id, 'When does the Lisbon office open?');
  assert.match(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), /half past eight/);
  await w.human.sendDm(dm, w.bot.id, 'And when does it close?');
  assert.is(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), COST_REPLY);
  // Within the minute: nothing more (the proof that the bot handled the DM is its handled mark).
  const mark = w.human.ws.frames.length;
  const third = await w.human.sendDm(dm, w.bot.id, 'Are you there?');
  await until(
    'the third DM handled',
    async () =>
      (await w.s.db.pool.query('SELECT 1 FROM chatsvc_handled WHERE message_id = $1', [third])).rowCount !== 0,
    15_000,
    100,
  );
  await new Promise((r) => setTimeout(r, 500));
  assert.not.ok(
    w.human.ws.frames.slice(mark).some((f) => f.type === 'MessageCreated' && f.message.sender_id === w.bot.id),
    'no second canned reply',
  );
  // A minute later (the platform's clock), the canned reply may go again.
  w.s.clock.advance(61_000);
  await w.human.sendDm(dm, w.bot.id, 'Still there?');
  assert.is(w.human.decryptDm((await w.human.botMessage(dm, w.bot.id)).ciphertext), COST_REPLY);
});

test.run();
