// The three services' apps, each given its narrow dependency object from the platform.

import { createChatApp } from '../api/chat/app.ts';
import type { ChatDeps } from '../api/chat/deps.ts';
import { ChatSessionCache } from '../api/chat/session-cache.ts';
import { BotTokenCache } from '../api/chat/bot-cache.ts';
import { chatJwtSecret, chatVapidKeys } from './chat-secrets.ts';
import { createOrchestrationApp } from '../api/orchestration/app.ts';
import { PrincipalCache } from '../api/orchestration/auth/principal-cache.ts';
import { ProfileCache } from '../api/orchestration/profiles/profile-cache.ts';
import type { OrchDeps } from '../api/orchestration/deps.ts';
import { createRegistryApp } from '../api/registry/app.ts';
import type { RegistryDeps } from '../api/registry/deps.ts';
import { TokenCache } from '../api/registry/auth/token-cache.ts';
import { createModels } from '../infra/llm/index.ts';
import { FilesystemBlobStore } from '../infra/files/store.ts';
import { ChatsvcConnector } from '../api/orchestration/chatsvc/connector.ts';
import type { Platform } from './platform.ts';

export type ServiceName = 'orch' | 'chat' | 'registry';
export const SERVICES: ServiceName[] = ['orch', 'chat', 'registry'];

/** One chat-service connector per platform (its bot sockets and supervisor are the process's). */
const connectors = new WeakMap<Platform, { connector: ChatsvcConnector; models: ReturnType<typeof createModels> }>();

export function chatsvcConnector(p: Platform): ChatsvcConnector {
  return orchShared(p).connector;
}

function orchShared(p: Platform) {
  let shared = connectors.get(p);
  if (!shared) {
    const models = createModels(p.config.llm, p.log);
    const connector = new ChatsvcConnector({
      commands: p.commands,
      db: p.pool,
      clock: p.clock,
      config: p.config,
      log: p.log,
      limiter: p.limiter,
      models,
      sealKey: p.sealKey,
      metrics: p.metrics,
    });
    connectors.set(p, (shared = { connector, models }));
  }
  return shared;
}

export function orchDeps(p: Platform): OrchDeps {
  const shared = orchShared(p);
  return {
    commands: p.commands,
    db: p.pool,
    sealKey: p.sealKey,
    clock: p.clock,
    config: p.config,
    log: p.log,
    limiter: p.limiter,
    metrics: p.metrics,
    principals: new PrincipalCache(p.engine, p.pool, p.clock),
    profiles: new ProfileCache(p.engine, p.pool),
    events: p.store,
    audit: { chain: p.chain, publicKeyHex: p.auditKey.publicKeyHex },
    models: shared.models,
    version: p.version,
    chatsvc: shared.connector,
    maintenance: () => p.gate.view(),
    updates: { service: 'orch', checker: p.updates.checkers.orch, sidecar: p.updates.sidecars.orch },
  };
}

export function chatDeps(p: Platform): ChatDeps {
  return {
    db: p.pool,
    clock: p.clock,
    log: p.log,
    metrics: p.metrics,
    limiter: p.limiter,
    version: p.version,
    startedAt: p.startedAt,
    commands: p.commands,
    sealKey: p.sealKey,
    config: p.config.chat,
    jwtSecret: chatJwtSecret(p.config.chat, p.sealKey),
    events: p.store,
    sessions: new ChatSessionCache(p.engine, p.pool),
    bots: new BotTokenCache(p.engine, p.pool),
    maintenance: () => p.gate.view(),
    updates: { service: 'chat', checker: p.updates.checkers.chat, sidecar: p.updates.sidecars.chat },
    files: new FilesystemBlobStore(p.config.chat.files.dir),
    vapid: { subject: p.config.chat.push.subject, keys: chatVapidKeys(p.config.chat, p.sealKey) },
  };
}

export function registryDeps(p: Platform): RegistryDeps {
  return {
    commands: p.commands,
    db: p.pool,
    clock: p.clock,
    config: p.config,
    log: p.log,
    metrics: p.metrics,
    limiter: p.limiter,
    sealKey: p.sealKey,
    tokens: new TokenCache(p.engine, p.pool),
    version: p.version,
    maintenance: () => p.gate.view(),
  };
}

export function createApp(name: ServiceName, platform: Platform) {
  switch (name) {
    case 'orch':
      return createOrchestrationApp(orchDeps(platform));
    case 'chat':
      return createChatApp(chatDeps(platform));
    case 'registry':
      return createRegistryApp(registryDeps(platform));
  }
}
