// The services for route and end-to-end suites, on a fresh database with the real platform:
//
// - `startTestApps` (route suites): the three apps in-process, requests through `app.request()`
//   (no sockets). Their base URLs (`http://orch.test`, ...) are served by `http()` below.
// - `startTestServices` (e2e suites): the real HTTP services on ephemeral loopback ports.
//
// Log lines are captured so suites can scan them. The log itself is where TEST_LOG says
// (tests/support/test-log.ts): the database's `events` table, or an EventStoreDB test double.

import { validateAppends } from './event-validation.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ShiftedClock } from '../../infra/clock.ts';
import { loadConfig } from '../../infra/config.ts';
import type { LogFilter, RecordedEvent } from '../../infra/eventstore/port.ts';
import type { Position } from '../../infra/eventstore/position.ts';
import { createLogger } from '../../infra/logging.ts';
import { createApp, SERVICES, type ServiceName } from '../../main/apps.ts';
import { openPlatform, type Platform, type PlatformOptions } from '../../main/platform.ts';
import { startServices, type RunningService } from '../../main/serve.ts';
import { freshDatabase, type TestDatabase } from './database.ts';
import { testLogEnv } from './test-log.ts';

export const TEST_SECRET_KEY = 'a1'.repeat(32);

type InProcessApp = { request(input: string, init: RequestInit, env: unknown): Response | Promise<Response> };
/** Apps served in-process, by origin. */
const inProcess = new Map<string, InProcessApp>();
let appSeq = 0;

export class TestServices {
  orch = '';
  chat = '';
  registry = '';
  platform!: Platform;
  /** The platform's clock (in-process and real-socket services alike): suites move it to test expiry, throttling windows and timers. */
  readonly clock = new ShiftedClock();
  readonly logLines: string[] = [];
  /** Options of the platform the next `start` opens (a suite sets them, then restarts). */
  platformOptions: Omit<PlatformOptions, 'clock'> = {};
  private running: RunningService[] = [];
  private readonly stoppedPorts = new Map<string, number>();
  private origins: string[] = [];
  private started = false;

  constructor(
    readonly db: TestDatabase,
    readonly env: Record<string, string>,
    readonly mode: 'in-process' | 'http',
  ) {}

  async start(): Promise<void> {
    this.started = true;
    const log = createLogger({ level: 'debug', sink: (line) => this.logLines.push(line) });
    this.platform = await openPlatform(loadConfig(this.env), log, { ...this.platformOptions, clock: this.clock });
    validateAppends(this.platform.store);
    if (this.mode === 'http') {
      this.running = await startServices(this.platform, SERVICES);
      for (const s of this.running) this[s.name] = s.url;
      return;
    }
    const { ensureBootstrapAdmin, ensureRunner } = await import('../../main/bootstrap.ts');
    await ensureBootstrapAdmin(this.platform);
    await ensureRunner(this.platform);
    const { ensurePersonalAssistant } = await import('../../main/profiles.ts');
    await ensurePersonalAssistant(this.platform);
    const seq = ++appSeq;
    for (const name of SERVICES) {
      const origin = `http://${name}-${seq}.test`;
      inProcess.set(origin, createApp(name as ServiceName, this.platform));
      this.origins.push(origin);
      this[name] = origin;
    }
  }

  /** Stop the services; the database stays. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await Promise.all(this.running.map((s) => s.close()));
    this.running = [];
    for (const origin of this.origins) inProcess.delete(origin);
    this.origins = [];
    await this.platform.close();
  }

  /**
   * Stop one service (http mode): its sockets close and its port refuses, the others and the
   * platform run on. `startService` listens again on the same port.
   */
  async stopService(name: 'orch' | 'chat' | 'registry'): Promise<void> {
    const running = this.running.find((s) => s.name === name);
    if (!running) throw new Error(`${name} is not running`);
    this.running = this.running.filter((s) => s !== running);
    this.stoppedPorts.set(name, running.port);
    await running.close();
  }

  async startService(name: 'orch' | 'chat' | 'registry'): Promise<void> {
    const port = this.stoppedPorts.get(name);
    if (port === undefined) throw new Error(`${name} was not stopped`);
    const listen = this.platform.config.listen[name];
    const previous = listen.port;
    listen.port = port;
    try {
      this.running.push(...(await startServices(this.platform, [name])));
    } finally {
      listen.port = previous;
    }
    this.stoppedPorts.delete(name);
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

async function start(label: string, env: Record<string, string>, mode: 'in-process' | 'http'): Promise<TestServices> {
  const db = await freshDatabase(label);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-test-'));
  const services = new TestServices(
    db,
    {
      DATABASE_URL: db.url,
      DATA_DIR: dataDir,
      ORCH_SECRET_KEY: TEST_SECRET_KEY,
      ORCH_LISTEN: '127.0.0.1:0',
      CHATSVC_LISTEN: '127.0.0.1:0',
      REGISTRY_LISTEN: '127.0.0.1:0',
      ...(await testLogEnv(db.url)),
      ...env,
    },
    mode,
  );
  await services.start();
  return services;
}

/** The three apps in-process (route suites). */
export const startTestApps = (label: string, env: Record<string, string> = {}) => start(label, env, 'in-process');
/** The three services listening on loopback (e2e suites). */
export const startTestServices = (label: string, env: Record<string, string> = {}) => start(label, env, 'http');

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  json?: unknown;
  body?: string | Uint8Array;
  /** In-process only: the TCP peer the app sees (default 127.0.0.1). */
  peer?: string;
}

/** One HTTP request (in-process for the apps of `startTestApps`, over the network otherwise); JSON bodies are sent and parsed. */
export async function http(url: string, init: RequestOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...init.headers };
  let body = init.body;
  if (init.json !== undefined) {
    headers['content-type'] ??= 'application/json';
    body = JSON.stringify(init.json);
  }
  const request = { method: init.method ?? (body !== undefined ? 'POST' : 'GET'), headers, body };
  const app = inProcess.get(new URL(url).origin);
  if (app && !headers.host) headers.host = new URL(url).host;
  const peer = init.peer ?? '127.0.0.1';
  const res = app
    ? await app.request(url, request, {
        incoming: {
          socket: { remoteAddress: peer, remotePort: 40000, remoteFamily: peer.includes(':') ? 'IPv6' : 'IPv4' },
        },
      })
    : await fetch(url, request);
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/**
 * The log's events in log order, optionally only those of `filter` (types, stream prefixes), read
 * through the store: suites ask the log this way, never its PostgreSQL table, so they hold on
 * either log (TEST_LOG).
 */
export async function loggedEvents(
  on: TestServices | Pick<Platform, 'store'>,
  filter?: LogFilter,
): Promise<RecordedEvent[]> {
  const store = 'platform' in on ? on.platform.store : on.store;
  const events: RecordedEvent[] = [];
  let after: Position | 'start' = 'start';
  for (;;) {
    const page = await store.readAll({ after, limit: 1000, filter });
    events.push(...page);
    if (page.length < 1000) return events;
    after = page[page.length - 1]!.position;
  }
}

/** Every event of the log as text, for scans (no secret may appear in it). */
export async function logText(services: TestServices): Promise<string> {
  return (await loggedEvents(services))
    .map((e) => `${e.stream} ${e.type} ${JSON.stringify(e.data)} ${JSON.stringify(e.metadata)}`)
    .join('\n');
}
