// `orchard openapi <orch|chat|registry>`: print a service's OpenAPI 3.1 document without a
// server or a database (for client generation). The apps are built exactly as `serve` builds
// them; nothing they depend on is called while the document is generated, and dependencies
// that would need a database refuse loudly if that ever changes.

import { CHAT_DOCS, createChatApp } from '../api/chat/app.ts';
import { createOrchestrationApp, ORCH_DOCS } from '../api/orchestration/app.ts';
import { createRegistryApp, REGISTRY_DOCS } from '../api/registry/app.ts';
import { openApiDocument } from '../api/shared/openapi.ts';
import { systemClock } from '../infra/clock.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { Metrics } from '../infra/metrics.ts';
import { MemoryRateLimiter } from '../infra/rate-limit/memory.ts';
import { version } from '../infra/version.ts';
import type { ServiceName } from './apps.ts';

function unavailable<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      throw new Error(`${what}.${String(property)} is not available while generating an OpenAPI document offline`);
    },
  });
}

export function offlineDocument(service: ServiceName) {
  const log = createLogger({ level: 'error', sink: () => {} });
  const common = {
    clock: systemClock,
    log,
    metrics: new Metrics(),
    limiter: new MemoryRateLimiter(systemClock),
    version,
    db: unavailable<any>('db'),
    maintenance: unavailable<any>('maintenance'),
  };
  switch (service) {
    case 'orch': {
      const app = createOrchestrationApp({
        ...common,
        config: loadConfig({}),
        sealKey: new Uint8Array(32),
        commands: unavailable('commands'),
        principals: unavailable('principals'),
        profiles: unavailable('profiles'),
        events: unavailable('events'),
        models: unavailable('models'),
        audit: unavailable('audit'),
        updates: unavailable('updates'),
        chatsvc: unavailable('chatsvc'),
      });
      return openApiDocument(app, { ...ORCH_DOCS, version });
    }
    case 'chat':
      return openApiDocument(
        createChatApp({
          ...common,
          startedAt: new Date(),
          config: loadConfig({}).chat,
          sealKey: new Uint8Array(32),
          jwtSecret: 'offline',
          commands: unavailable('commands'),
          events: unavailable('events'),
          sessions: unavailable('sessions'),
          bots: unavailable('bots'),
          updates: unavailable('updates'),
          files: unavailable('files'),
          vapid: unavailable('vapid'),
        }),
        { ...CHAT_DOCS, version },
      );
    case 'registry':
      return openApiDocument(
        createRegistryApp({
          ...common,
          config: loadConfig({}),
          sealKey: new Uint8Array(32),
          commands: unavailable('commands'),
          tokens: unavailable('tokens'),
        }),
        { ...REGISTRY_DOCS, version },
      );
  }
}
