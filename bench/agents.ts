// Projects, tasks and the cockpit, against the real orchestration service on a loopback port:
//   task_create: tasks created per second by 8 concurrent keyed clients (POST /api/v1/tasks:
//     reference checks, the task's stream, the tasks and cockpit projections caught up before
//     each answer);
//   cockpit_summary: p99 latency (ms) of GET /api/v1/cockpit/summary, one request at a time, with
//     100 projects and 100,000 tasks in the log (target: 5 ms); its p50 beside it.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TASK_STATUSES, type TaskEvent } from '../domain/orchestration/tasks/events.ts';
import { taskStream } from '../domain/orchestration/streams.ts';
import { toAppend } from '../infra/commands.ts';
import { loadConfig } from '../infra/config.ts';
import { comparePositions, type Position } from '../infra/eventstore/position.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import type { Figure } from './figure.ts';
import { percentile } from './http.ts';
import { throughput } from './measure.ts';
import { BENCH_POOL_ENV } from './pools.ts';

export const AGENTS_SEED = { projects: 100, tasks: 100_000 };
const ADMIN_KEY = `orch_bench-agents-${randomUUID()}`;
const round = (value: number, digits = 0) => Number(value.toFixed(digits));

export async function agentsBench(
  databaseUrl: string,
  timing: { warmupMs: number; measureMs: number },
  progress: (m: string) => void = () => {},
): Promise<Figure[]> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-agents-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c4'.repeat(32),
    ORCH_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    ADMIN_API_KEY: ADMIN_KEY,
  });
  const platform = await openPlatform(
    config,
    createLogger({ level: 'error', sink: (line) => progress(`engine: ${line}`) }),
  );
  const [orch] = await startServices(platform, ['orch']);
  const base = orch!.url;
  const headers = { 'X-API-Key': ADMIN_KEY, 'content-type': 'application/json' };
  try {
    const projects: string[] = [];
    for (let i = 0; i < AGENTS_SEED.projects; i++) {
      const r = await fetch(`${base}/api/v1/projects`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `project-${i}` }),
      });
      projects.push(((await r.json()) as { id: string }).id);
    }

    // task_create on the (nearly) empty log first.
    let n = 0;
    const create = async () => {
      const r = await fetch(`${base}/api/v1/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ project_id: projects[n++ % projects.length], title: `task ${n}`, priority: 'medium' }),
      });
      await r.text();
      if (r.status !== 201) throw new Error(`POST /api/v1/tasks: ${r.status}`);
      return 1;
    };
    progress('agents: task_create with 8 clients');
    const created = await throughput(
      Array.from({ length: 8 }, () => create),
      timing,
    );

    // The rest of the 100,000 tasks straight into the log (8 writers), then the projections catch up.
    const remaining = AGENTS_SEED.tasks - n;
    progress(`agents: appending ${remaining} tasks`);
    const context = { actor: { kind: 'system' as const, id: 'bench' }, correlationId: null };
    const at = new Date().toISOString();
    let last: Position | null = null;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < remaining) {
          const i = next++;
          const id = randomUUID();
          const event: TaskEvent = {
            type: 'TaskCreated',
            data: {
              task_id: id,
              project_id: projects[i % projects.length]!,
              title: `seeded ${i}`,
              description: null,
              priority: 'low',
              status: TASK_STATUSES[i % TASK_STATUSES.length]!,
              directive_id: null,
              parent_task_id: null,
              branch_name: null,
              created_by: null,
              created_by_user: null,
              metadata: {},
              depends_on: [],
              at,
            },
          };
          const { position } = await platform.store.append(taskStream(id), [toAppend(event, context)], {
            expected: 'no_stream',
          });
          if (!last || comparePositions(position, last) > 0) last = position;
        }
      }),
    );
    await platform.engine.waitFor(last!, ['TaskCreated'], 900_000);
    await platform.pool.query('VACUUM ANALYZE');

    progress('agents: cockpit_summary');
    const samples: number[] = [];
    for (let i = 0; i < 1200; i++) {
      const started = performance.now();
      const r = await fetch(`${base}/api/v1/cockpit/summary`, { headers });
      const body = (await r.json()) as { projects: unknown[] };
      if (r.status !== 200 || body.projects.length !== AGENTS_SEED.projects) throw new Error(`cockpit: ${r.status}`);
      if (i >= 200) samples.push(performance.now() - started);
    }
    return [
      { name: 'task_create', value: round(created.perSecond), unit: 'tasks/s (8 clients)' },
      {
        name: 'cockpit_summary',
        value: round(percentile(samples, 99), 2),
        unit: `ms p99 (${AGENTS_SEED.projects} projects, ${AGENTS_SEED.tasks} tasks; target 5)`,
      },
      { name: 'cockpit_summary_p50', value: round(percentile(samples, 50), 2), unit: 'ms p50' },
    ];
  } finally {
    await orch!.close();
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
