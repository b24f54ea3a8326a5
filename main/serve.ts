// Serving: the HTTP services of one process on their listen addresses, the DATA_DIR lock that
// keeps a second server off the same data, and the lines that tell an operator what started.

import { serve, type ServerType } from '@hono/node-server';
import { WebSocketServer } from 'ws';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ListenAddress } from '../infra/config.ts';
import { ensureWritableDir } from '../infra/db/embedded.ts';
import { StartupError } from '../infra/startup-error.ts';
import { createApp, type ServiceName } from './apps.ts';
import { chatsvcBots } from './chatsvc-bots.ts';
import { ensureBootstrapAdmin, ensureRunner } from './bootstrap.ts';
import { ensurePersonalAssistant } from './profiles.ts';
import type { Platform } from './platform.ts';
import { chatBackground } from './chat-background.ts';
import { drainUnreadBodies } from './lingering-close.ts';
import { startFileSweeper } from './chat-files.ts';

export interface RunningService {
  name: ServiceName;
  url: string;
  port: number;
  close(): Promise<void>;
}

const LISTEN_VARIABLE: Record<ServiceName, string> = {
  orch: 'ORCH_LISTEN',
  chat: 'CHATSVC_LISTEN',
  registry: 'REGISTRY_LISTEN',
};
const TITLE: Record<ServiceName, string> = { orch: 'orchestration', chat: 'chat', registry: 'registry' };
const HEALTH: Record<ServiceName, string> = { orch: '/api/v1/health', chat: '/api/health', registry: '/health' };

const LISTEN_REASONS: Record<string, string> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'the address is not available on this machine',
};

type Fetchable = { fetch: (request: Request, env: any) => Response | Promise<Response> };

/** WebSocket frames past this size close the connection (ws' default would allow 100 MiB). */
export const WS_MAX_PAYLOAD_BYTES = 64 * 1024;

export function listen(
  app: Fetchable,
  address: ListenAddress,
  variable: string,
  websocket?: WebSocketServer,
): Promise<{ server: ServerType; port: number }> {
  return new Promise((resolve, reject) => {
    // Bodies left unread when their response is sent are drained here (lingering-close.ts), not by node-server.
    const options = {
      fetch: app.fetch,
      hostname: address.host,
      port: address.port,
      autoCleanupIncoming: false,
      ...(websocket ? { websocket: { server: websocket } } : {}),
    };
    const server = serve(options, (info: AddressInfo) => resolve({ server, port: info.port }));
    drainUnreadBodies(server as Server);
    server.once('error', (error: NodeJS.ErrnoException) => {
      const reason = LISTEN_REASONS[error.code ?? ''] ?? error.message;
      reject(
        new StartupError(
          `cannot listen on ${address.host}:${address.port}: ${reason}; set ${variable} to another host:port`,
        ),
      );
    });
  });
}

async function closeServer(server: ServerType, websocket?: WebSocketServer): Promise<void> {
  // Upgraded sockets are no longer the HTTP server's: end them here, and give their close
  // handlers (which stop live delivery) a moment to run before the platform closes.
  if (websocket?.clients.size) {
    for (const client of websocket.clients) client.terminate();
    await new Promise((r) => setTimeout(r, 50));
  }
  return new Promise((resolve) => {
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    server.close(() => resolve());
  });
}

const urlOf = (host: string, port: number) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

/** A service built and ready to listen. */
export interface PreparedService {
  name: ServiceName;
  app: Fetchable;
  websocket?: WebSocketServer;
}

/** The principals configuration names (admin, runner) and the personal assistant, when orch is served. */
export async function ensureConfigured(platform: Platform, names: ServiceName[]): Promise<void> {
  if (!names.includes('orch')) return;
  await ensureBootstrapAdmin(platform);
  await ensureRunner(platform);
  await ensurePersonalAssistant(platform);
}

/** Build the named services' apps: no request is made, nothing listens yet. */
export function buildServices(platform: Platform, names: ServiceName[]): PreparedService[] {
  return names.map((name) => {
    // The chat service answers WebSockets (GET /api/ws), the orchestration service /ws and /ws/live.
    const websocket =
      name !== 'registry' ? new WebSocketServer({ noServer: true, maxPayload: WS_MAX_PAYLOAD_BYTES }) : undefined;
    return { name, app: createApp(name, platform), websocket };
  });
}

/** The configured records, then the apps; nothing listens yet. */
export async function prepareServices(platform: Platform, names: ServiceName[]): Promise<PreparedService[]> {
  await ensureConfigured(platform, names);
  return buildServices(platform, names);
}

/** Listen on each prepared service's address; on any failure, the ones already listening are closed again. */
export async function listenServices(platform: Platform, prepared: PreparedService[]): Promise<RunningService[]> {
  const running: RunningService[] = [];
  try {
    for (const { name, app, websocket } of prepared) {
      const address = platform.config.listen[name];
      const { server, port } = await listen(app, address, LISTEN_VARIABLE[name], websocket);
      const url = urlOf(address.host, port);
      platform.log.info('listening', { service: name, url });
      // The chat service's scheduler, reactors and blob sweep run on every instance (they share the
      // work); the orchestration service runs the chat-service bots (a socket per active
      // integration, and their supervisor, a processor in every instance).
      const background = name === 'chat' ? chatBackground(platform) : null;
      background?.start();
      const stopSweep = name === 'chat' ? startFileSweeper(platform) : () => {};
      const bots = name === 'orch' ? chatsvcBots(platform) : null;
      await bots?.start();
      running.push({
        name,
        url,
        port,
        close: async () => {
          stopSweep();
          await background?.stop();
          await bots?.stop();
          await closeServer(server, websocket);
        },
      });
    }
  } catch (error) {
    await Promise.all(running.map((s) => s.close()));
    throw error;
  }
  platform.updates.start(prepared.map((p) => p.name));
  return running;
}

/** Start the named services; on any failure, the ones already listening are closed again. */
export async function startServices(platform: Platform, names: ServiceName[]): Promise<RunningService[]> {
  return listenServices(platform, await prepareServices(platform, names));
}

/** What an operator reads on the terminal once the services listen (stderr; stdout carries the JSON logs). */
export function announcement(platform: Platform, running: RunningService[]): string[] {
  const lines = running.map(
    (s) => `orchard: ${TITLE[s.name].padEnd(13)} ${s.url}  (health: ${s.url}${HEALTH[s.name]})`,
  );
  if (running.some((s) => s.name === 'orch') && !platform.config.adminApiKey) {
    lines.push(
      'orchard: no admin account key is configured: set ADMIN_API_KEY (or ADMIN_API_KEY_FILE, a file holding it) and restart to get an admin account',
    );
  }
  return lines;
}

/**
 * One server per DATA_DIR: a pid file taken exclusively at start, removed at stop. A file whose
 * process is gone is a crash's leftover and is taken over.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await ensureWritableDir(dataDir);
  const file = path.join(dataDir, 'orchard.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx', mode: 0o644 });
      return async () => {
        if (existsSync(file) && (await readFile(file, 'utf8')).trim() === String(process.pid))
          await rm(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number((await readFile(file, 'utf8').catch(() => '')).trim());
      let alive = false;
      try {
        if (pid > 0) process.kill(pid, 0);
        alive = pid > 0;
      } catch (e) {
        alive = (e as NodeJS.ErrnoException).code === 'EPERM';
      }
      if (alive && pid !== process.pid) {
        throw new StartupError(
          `another orchard server (pid ${pid}) is already running on DATA_DIR=${dataDir}; stop it, or give this one another DATA_DIR`,
        );
      }
      await rm(file, { force: true });
    }
  }
  throw new StartupError(`could not take the server lock ${file}`);
}
