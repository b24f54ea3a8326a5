// A service as its own process (`orchard serve <service>`), for suites and benches that need one
// apart from the process running them: several instances on one database, a kill -9, or a
// service whose CPU and heap are measured alone. Its URL is the one it announces.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN } from './cli.ts';
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
  service: Service, databaseUrl: string, env: Record<string, string> = {}, options: { timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<ServiceProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `orchard-${service}-`));
  const clean = { ...process.env };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'ADMIN_API_KEY', 'ADMIN_API_KEY_FILE', 'REDIS_URL', 'EVENTSTORE_URL']) delete clean[k];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), BIN, 'serve', service], {
    env: { ...clean, DATABASE_URL: databaseUrl, ...await testLogEnv(databaseUrl), DATA_DIR: dataDir, [LISTEN[service]]: '127.0.0.1:0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  child.stdout!.on('data', (c) => out.push(String(c)));
  child.stderr!.on('data', (c) => out.push(String(c)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const announced = new RegExp(`^orchard: ${ANNOUNCED[service]}\\s+(http://\\S+)`, 'm');
  const deadline = Date.now() + (options.timeoutMs ?? 120_000);
  let url: string | undefined;
  while (!url) {
    url = announced.exec(out.join(''))?.[1];
    if (url) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
      throw new Error(`serve ${service} did not start:\n${out.join('').slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  };
  return { url, child, output: () => out.join(''), stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}
