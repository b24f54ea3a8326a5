// Chat pipeline figures, against the real platform (its projections, read models and the
// orchestration app in-process), on the offline local model:
//
//   public_chat_turn_local_p50 / _p99  ms       one public chat turn (POST /api/v1/public/agents/chat/{slug}),
//       8 concurrent visitors in closed loops, each continuing its conversation with its token
//       (a fresh conversation every 20 turns); every stage of the pipeline runs: limits, input
//       cap, injection check, PII scrub, cost cap, grounding (knowledge search on), the model,
//       leak detection, the turn appended and projected before the answer (read-your-writes).
//   public_chat_turn_local  turns/s           the same run's throughput.
//   pipeline_overhead_ratio                    mean turn time ÷ mean bare local-model call time,
//       the bare calls measured in the same run (`Models.complete` alone).
//
// Targets (issue 13): p99 ≤ 25 ms and ≥ 300 turns/s on the development machine.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { createApp, orchDeps } from '../main/apps.ts';
import { ensureBootstrapAdmin } from '../main/bootstrap.ts';
import { openPlatform } from '../main/platform.ts';
import type { Figure } from './figure.ts';
import { percentile } from './http.ts';
import { BENCH_POOL_ENV } from './pools.ts';

const ADMIN_KEY = 'orch_bench-agent-chat-admin-key-000000';
const VISITORS = 8;
const TURNS_PER_CONVERSATION = 20;
const BARE_CALLS = 2000;

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

export async function agentChatFigures(
  url: string,
  options: { progress?: (m: string) => void; seconds?: number } = {},
): Promise<Figure[]> {
  const progress = options.progress ?? (() => {});
  const seconds = options.seconds ?? 4;
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-chat-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: url,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c4'.repeat(32),
    ADMIN_API_KEY: ADMIN_KEY,
    LOG_LEVEL: 'error',
    ORCH_PUBLIC_CHAT_RPM: '1000000',
  });
  const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
  try {
    await ensureBootstrapAdmin(platform);
    const app = createApp('orch', platform);
    const call = async (pathname: string, body: unknown, headers: Record<string, string> = {}) => {
      const r = await app.request(`http://orch.bench${pathname}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`POST ${pathname}: ${r.status} ${text}`);
      return JSON.parse(text) as Record<string, any>;
    };
    const admin = { 'X-API-Key': ADMIN_KEY };
    const profile = await call(
      '/api/v1/agent-chat/profiles',
      {
        slug: 'bench-front',
        name: 'Bench front desk',
        security_tier: 1,
        rate_limit_rpm: 2_000_000_000,
        rate_limit_rpd: 2_000_000_000,
        system_prompt: 'You are the front desk of Example Corp. Be brief and friendly; never reveal internal notes.',
      },
      admin,
    );
    for (const [title, content] of [
      ['Opening hours', 'The office opens at nine and closes at five on weekdays.'],
      ['Parking', 'Visitors park in the north garage.'],
      ['Returns', 'Returns are accepted within thirty days with a receipt.'],
    ]) {
      await call(`/api/v1/bots/${profile.id}/knowledge`, { title, content }, admin);
    }
    const questions = [
      'When does the office open?',
      'Where can I park my car?',
      'Can I return a jacket I bought last week?',
      'Hello, who are you?',
    ];

    // Bare local-model calls: the pipeline's own model call, alone.
    const models = orchDeps(platform).models;
    const request = {
      model: 'local',
      system: 'You are the front desk.',
      messages: [{ role: 'user' as const, content: questions[0]! }],
      max_tokens: 256,
      temperature: 0.7,
      hints: { persona: 'Bench', grounding: [{ title: 'Opening hours', content: 'Nine to five.' }] },
    };
    for (let i = 0; i < 200; i++) await models.complete(request);
    const bareStart = performance.now();
    for (let i = 0; i < BARE_CALLS; i++) await models.complete(request);
    const bareMs = (performance.now() - bareStart) / BARE_CALLS;

    progress(`public chat turns: ${VISITORS} visitors for ${seconds} s`);
    const latencies: number[] = [];
    const warmupEnd = performance.now() + seconds * 250;
    const end = warmupEnd + seconds * 1000;
    await Promise.all(
      Array.from({ length: VISITORS }, async (_, v) => {
        let conversation: { conversation_id: string; visitor_token: string } | null = null;
        let turns = 0;
        for (let i = 0; performance.now() < end; i++) {
          const began = performance.now();
          const body = { message: questions[(i + v) % questions.length], ...(conversation ?? {}) };
          const reply = await call(`/api/v1/public/agents/chat/${profile.slug}`, body, {});
          const done = performance.now();
          if (began >= warmupEnd && done < end) latencies.push(done - began);
          if (reply.visitor_token)
            conversation = { conversation_id: reply.conversation_id, visitor_token: reply.visitor_token };
          if (++turns % TURNS_PER_CONVERSATION === 0) conversation = null;
        }
      }),
    );
    const mean = latencies.reduce((a, b) => a + b, 0) / latencies.length;
    return [
      { name: 'public_chat_turn_local_p50', value: round(percentile(latencies, 50)), unit: 'ms' },
      { name: 'public_chat_turn_local_p99', value: round(percentile(latencies, 99)), unit: 'ms' },
      { name: 'public_chat_turn_local', value: round(latencies.length / seconds, 1), unit: 'turns/s' },
      {
        name: 'pipeline_overhead_ratio',
        value: round(mean / bareMs, 1),
        unit: 'ratio',
        baseline: 'local_model_call',
        ratio: round(mean / bareMs, 1),
      },
      { name: 'local_model_call', value: round(bareMs, 4), unit: 'ms' },
    ];
  } finally {
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
