// A chat service as its own process (`orchard serve chat`), for suites and benches that need
// several instances on one database and a kill -9. Every instance shares the sealing key and the
// JWT secret, so a token from one is good on the others.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN } from './cli.ts';

export interface ChatProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM and wait (a clean stop). */
  stop(): Promise<void>;
  /** SIGKILL and wait (no cleanup at all). */
  kill(): Promise<void>;
}

export const SHARED_CHAT_ENV = { ORCH_SECRET_KEY: 'b7'.repeat(32), CHATSVC_JWT_SECRET: 'shared-jwt-secret-for-test-instances-0123456789' };

export async function startChatProcess(databaseUrl: string, env: Record<string, string> = {}, timeoutMs = 120_000): Promise<ChatProcess> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-chat-'));
  const clean = { ...process.env };
  for (const k of ['DATABASE_URL', 'DATA_DIR', 'ADMIN_API_KEY', 'ADMIN_API_KEY_FILE', 'REDIS_URL', 'EVENTSTORE_URL']) delete clean[k];
  const child = spawn(process.execPath, [BIN, 'serve', 'chat'], {
    env: { ...clean, ...SHARED_CHAT_ENV, DATABASE_URL: databaseUrl, DATA_DIR: dataDir, CHATSVC_LISTEN: '127.0.0.1:0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  child.stdout!.on('data', (c) => out.push(String(c)));
  child.stderr!.on('data', (c) => out.push(String(c)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + timeoutMs;
  let url: string | undefined;
  while (!url) {
    url = /^orchard: chat\s+(http:\/\/\S+)/m.exec(out.join(''))?.[1];
    if (url) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`serve chat did not start:\n${out.join('').slice(-3000)}`);
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
