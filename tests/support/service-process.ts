// A service as its own process (`orchard serve <service>`), for suites and benches that need one
// apart from the process running them: several instances on one database, a kill -9, or a
// service whose CPU and heap are measured alone. Its URL is the one it announces.

import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startOrchard } from './cli.ts';
import { testLogEnv } from './test-log.ts';

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait (a clean stop). */
  stop(): Promise<void>;
  /** SIGKILL and wait (no cleanup at all). */
  kill(): Promise<void>;
}

type Service = 'chat' | 'orch';
/** How `serve` names the service in its announcement, and the variable of its listen address. */
const ANNOUNCED: Record<Service, string> = { chat: 'chat', orch: 'orchestration' };
const LISTEN: Record<Service, string> = { chat: 'CHATSVC_LISTEN', orch: 'ORCH_LISTEN' };

/**
 * Start `service` on `databaseUrl` (and the log TEST_LOG puts with it), with a DATA_DIR of its
 * own and none of this process's database, key or broker settings; `env` adds to (or overrides) that. `nodeArgs` go to Node
 * itself (`--cpu-prof`, say).
 */
export async function startServiceProcess(
  service: Service,
  databaseUrl: string,
  env: Record<string, string> = {},
  options: { timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<ServiceProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `orchard-${service}-`));
  const clean = { ...process.env };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'ADMIN_API_KEY', 'ADMIN_API_KEY_FILE', 'REDIS_URL', 'EVENTSTORE_URL'])
    delete clean[k];
  const started = startOrchard(['serve', service], {
    env: {
      ...clean,
      DATABASE_URL: databaseUrl,
      ...(await testLogEnv(databaseUrl)),
      DATA_DIR: dataDir,
      [LISTEN[service]]: '127.0.0.1:0',
      LOG_LEVEL: 'warn',
      ...env,
    },
    nodeArgs: options.nodeArgs,
  });
  const { child } = started;
  const announced = new RegExp(`^orchard: ${ANNOUNCED[service]}\\s+(http://\\S+)`, 'm');
  let url: string;
  try {
    url = await started.waitFor(
      `serve ${service} to announce its URL`,
      () => announced.exec(started.output())?.[1],
      options.timeoutMs ?? 120_000,
    );
  } catch (error) {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await started.exited;
    await rm(dataDir, { recursive: true, force: true });
  };
  return { url, child, output: started.output, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}
