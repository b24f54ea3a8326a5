// The three services' apps, each given its narrow dependency object from the platform.

import { createChatApp } from '../api/chat/app.ts';
import type { ChatDeps } from '../api/chat/deps.ts';
import { ChatSessionCache } from '../api/chat/session-cache.ts';
import { chatJwtSecret } from './chat-secrets.ts';
import { createOrchestrationApp } from '../api/orchestration/app.ts';
import { PrincipalCache } from '../api/orchestration/auth/principal-cache.ts';
import type { OrchDeps } from '../api/orchestration/deps.ts';
import { createRegistryApp } from '../api/registry/app.ts';
import type { RegistryDeps } from '../api/registry/deps.ts';
import { TokenCache } from '../api/registry/auth/token-cache.ts';
import type { Platform } from './platform.ts';

export type ServiceName = 'orch' | 'chat' | 'registry';
export const SERVICES: ServiceName[] = ['orch', 'chat', 'registry'];

export function orchDeps(p: Platform): OrchDeps {
  return {
    commands: p.commands, db: p.pool, sealKey: p.sealKey, clock: p.clock, config: p.config, log: p.log,
    limiter: p.limiter, metrics: p.metrics, principals: new PrincipalCache(p.engine, p.pool, p.clock), version: p.version,
  };
}

export function chatDeps(p: Platform): ChatDeps {
  return {
    db: p.pool, clock: p.clock, log: p.log, metrics: p.metrics, limiter: p.limiter, version: p.version, startedAt: p.startedAt,
    commands: p.commands, sealKey: p.sealKey, config: p.config.chat, jwtSecret: chatJwtSecret(p.config.chat, p.sealKey), events: p.store,
    sessions: new ChatSessionCache(p.engine, p.pool),
  };
}

export function registryDeps(p: Platform): RegistryDeps {
  return {
    commands: p.commands, db: p.pool, clock: p.clock, config: p.config, log: p.log, metrics: p.metrics, limiter: p.limiter,
    sealKey: p.sealKey, tokens: new TokenCache(p.engine, p.pool), version: p.version,
  };
}

export function createApp(name: ServiceName, platform: Platform) {
  switch (name) {
    case 'orch': return createOrchestrationApp(orchDeps(platform));
    case 'chat': return createChatApp(chatDeps(platform));
    case 'registry': return createRegistryApp(registryDeps(platform));
  }
}
