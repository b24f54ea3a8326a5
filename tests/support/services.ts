// The real services for end-to-end suites: a fresh database, the platform, and all three HTTP
// services on ephemeral loopback ports. Log lines are captured so suites can scan them.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../infra/config.ts';
import { createLogger } from '../../infra/logging.ts';
import { openPlatform, type Platform } from '../../infra/platform.ts';
import { SERVICES, startServices, type RunningService } from '../../infra/server.ts';
import { freshDatabase, type TestDatabase } from './database.ts';

export const TEST_SECRET_KEY = 'a1'.repeat(32);

export class TestServices {
  orch = '';
  chat = '';
  registry = '';
  platform!: Platform;
  readonly logLines: string[] = [];
  private running: RunningService[] = [];
  private started = false;

  constructor(readonly db: TestDatabase, readonly env: Record<string, string>) {}

  async start(): Promise<void> {
    this.started = true;
    const log = createLogger({ level: 'debug', sink: (line) => this.logLines.push(line) });
    this.platform = await openPlatform(loadConfig(this.env), log);
    this.running = await startServices(this.platform, SERVICES);
    for (const s of this.running) this[s.name] = s.url;
  }

  /** Stop the services; the database stays. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await Promise.all(this.running.map((s) => s.close()));
    this.running = [];
    await this.platform.close();
  }

  /** Stop, apply `env` changes (undefined removes a variable), start again. */
  async restart(changes: Record<string, string | undefined> = {}): Promise<void> {
    await this.stop();
    for (const [k, v] of Object.entries(changes)) {
      if (v === undefined) delete this.env[k];
      else this.env[k] = v;
    }
    await this.start();
  }

  async close(): Promise<void> {
    await this.stop();
    await this.db.drop();
    await rm(this.env.DATA_DIR!, { recursive: true, force: true });
  }
}

export async function startTestServices(label: string, env: Record<string, string> = {}): Promise<TestServices> {
  const db = await freshDatabase(label);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-e2e-'));
  const services = new TestServices(db, {
    DATABASE_URL: db.url, DATA_DIR: dataDir, ORCH_SECRET_KEY: TEST_SECRET_KEY,
    ORCH_LISTEN: '127.0.0.1:0', CHATSVC_LISTEN: '127.0.0.1:0', REGISTRY_LISTEN: '127.0.0.1:0', ...env,
  });
  await services.start();
  return services;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** One HTTP request; JSON bodies are sent and parsed. */
export async function http(url: string, init: { method?: string; headers?: Record<string, string>; json?: unknown; body?: string } = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(init.json);
  }
  const res = await fetch(url, { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Every event of the log as text, for scans (no secret may appear in it). */
export async function logText(services: TestServices): Promise<string> {
  const { rows } = await services.db.pool.query(`SELECT stream_id, type, data::text AS data, metadata::text AS metadata FROM events ORDER BY position`);
  return rows.map((r) => `${r.stream_id} ${r.type} ${r.data} ${r.metadata}`).join('\n');
}
