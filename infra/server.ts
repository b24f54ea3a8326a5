// Starts the HTTP services of one process on their listen addresses.

import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { createChatApp } from '../api/chat/app.ts';
import { ensureBootstrapAdmin, ensureRunner } from '../api/orchestration/accounts/bootstrap.ts';
import { createOrchestrationApp } from '../api/orchestration/app.ts';
import { createRegistryApp } from '../api/registry/app.ts';
import type { ListenAddress } from './config.ts';
import type { Platform } from './platform.ts';

export type ServiceName = 'orch' | 'chat' | 'registry';
export const SERVICES: ServiceName[] = ['orch', 'chat', 'registry'];

export interface RunningService {
  name: ServiceName;
  url: string;
  port: number;
  close(): Promise<void>;
}

// Hono apps differ in their variables; serving only needs `fetch`.
type AnyApp = Pick<Hono<any>, 'fetch'>;

export function listen(app: AnyApp, address: ListenAddress): Promise<{ server: ServerType; port: number }> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, hostname: address.host, port: address.port }, (info: AddressInfo) => resolve({ server, port: info.port }));
    server.once('error', reject);
  });
}

function closeServer(server: ServerType): Promise<void> {
  return new Promise((resolve) => {
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
    server.close(() => resolve());
  });
}

export async function startServices(platform: Platform, names: ServiceName[]): Promise<RunningService[]> {
  const running: RunningService[] = [];
  for (const name of names) {
    if (name === 'orch') {
      await ensureBootstrapAdmin(platform);
      await ensureRunner(platform);
    }
    const app: AnyApp = name === 'orch' ? createOrchestrationApp(platform) : name === 'chat' ? createChatApp(platform) : createRegistryApp(platform);
    const address = platform.config.listen[name];
    const { server, port } = await listen(app, address);
    const url = `http://${address.host.includes(':') ? `[${address.host}]` : address.host}:${port}`;
    platform.log.info('listening', { service: name, url });
    running.push({ name, url, port, close: () => closeServer(server) });
  }
  return running;
}
