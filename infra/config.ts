// Configuration: every environment variable the platform reads is declared once, as a zod
// schema with its default and description, in the section files under infra/config/. This
// module composes them into the `Config` the services take; docs/reference/configuration.md and
// `orchard config` are made from the same declarations.

import { z } from 'zod';
import { chatConfig, type ChatConfig } from './config/chat.ts';
import { ConfigError, envVarMeta, type ListenAddress, type Values } from './config/kinds.ts';
import { llmConfig, type LlmConfig } from './config/llm.ts';
import {
  orchestrationConfig,
  type ChatsvcConnectorConfig,
  type ForwardAuthConfig,
  type PublicChatConfig,
} from './config/orchestration.ts';
import { platformConfig, type LogLevel } from './config/platform.ts';
import { registryConfig, type RegistryConfig } from './config/registry.ts';
import { runnerConfig, type RunnerConfig } from './config/runner.ts';
import { ALL_VARS, SECTIONS } from './config/sections.ts';
import { updatesConfig, type UpdaterConfig, type UpdatesConfig } from './config/updates.ts';

export type {
  ChatConfig,
  ChatFilesConfig,
  ChatGifConfig,
  ChatOutboundConfig,
  ChatPushConfig,
  RegistrationMode,
} from './config/chat.ts';
export { ConfigError, optIn, optOut, parseListen, type ListenAddress } from './config/kinds.ts';
export type { LlmConfig, LlmProviderName } from './config/llm.ts';
export type { ChatsvcConnectorConfig, PublicChatConfig } from './config/orchestration.ts';
export type { RegistryConfig } from './config/registry.ts';
export type { RunnerConfig } from './config/runner.ts';
export type { UpdateChannelConfig, UpdaterConfig, UpdatesConfig } from './config/updates.ts';

/** Every declared variable -> its description (the compose test holds compose.yaml to it). */
export const ENV_VARS: Readonly<Record<string, string>> = Object.fromEntries(
  SECTIONS.flatMap((s) => Object.entries(s.vars).map(([name, schema]) => [name, envVarMeta.get(schema)!.description])),
);

type Env = Record<string, string | undefined>;

export interface Config {
  databaseUrl: string | null;
  /** Connections the platform's pool opens at most (its log listener is one more). */
  databasePoolSize: number;
  eventStoreUrl: string | null;
  dataDir: string;
  logLevel: LogLevel;
  listen: { orch: ListenAddress; chat: ListenAddress; registry: ListenAddress };
  adminApiKey: string | null;
  /** True when the admin key sits as a literal in the environment (not a file). */
  adminApiKeyLiteral: boolean;
  secretKeyHex: string | null;
  secretKeyFile: string;
  runnerApiKey: string | null;
  enforceAdminRole: boolean;
  /** When set, /metrics requires it as a Bearer token. */
  metricsToken: string | null;
  redisUrl: string | null;
  /** ORCH_LLM_MODEL: the model a profile gets when its creator names none. */
  llmModel: string | null;
  llm: LlmConfig;
  publicChat: PublicChatConfig;
  cookieSecure: boolean;
  /** The audit signing key's file, and whether ORCH_AUDIT_SIGNING_KEY_FILE named it (then it must exist). */
  auditSigningKeyFile: string;
  auditSigningKeyConfigured: boolean;
  /** ORCH_GATE_WS_LIVE: /ws/live refuses anonymous upgrades unless explicitly falsy. */
  gateWsLive: boolean;
  chat: ChatConfig;
  chatsvc: ChatsvcConnectorConfig;
  forwardAuth: ForwardAuthConfig;
  registry: RegistryConfig;
  runner: RunnerConfig;
  updates: UpdatesConfig;
  updater: UpdaterConfig;
}

const environment = z.object(ALL_VARS);

/**
 * Every variable parsed on its own first; every bad value is reported, one line each
 * (`NAME: expected ..., got "..."`), so one start shows all there is to fix. What takes more than
 * one variable or reads a file (`_FILE` secrets, keys checked after that read) is checked while
 * composing, and stops at its first problem, also as one `NAME: ...` line.
 */
export function parseEnvironment(env: Env): Values<typeof ALL_VARS> {
  const parsed = environment.safeParse(env);
  if (!parsed.success)
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  return parsed.data;
}

export function loadConfig(env: Env = process.env): Config {
  const v = parseEnvironment(env);
  const platform = platformConfig(v);
  const orch = orchestrationConfig(v);
  return {
    ...platform,
    listen: { orch: orch.listen, chat: v.CHATSVC_LISTEN, registry: v.REGISTRY_LISTEN },
    adminApiKey: orch.adminApiKey,
    adminApiKeyLiteral: orch.adminApiKeyLiteral,
    runnerApiKey: v.ORCH_RUNNER_API_KEY,
    enforceAdminRole: orch.enforceAdminRole,
    metricsToken: orch.metricsToken,
    llmModel: v.ORCH_LLM_MODEL,
    llm: llmConfig(v),
    publicChat: orch.publicChat,
    cookieSecure: orch.cookieSecure,
    gateWsLive: orch.gateWsLive,
    chat: chatConfig(v, { dataDir: platform.dataDir, nodeEnv: v.NODE_ENV }),
    chatsvc: orch.chatsvc,
    forwardAuth: orch.forwardAuth,
    registry: registryConfig(v),
    runner: runnerConfig(v, platform.dataDir, orch.listen),
    ...updatesConfig(v, platform.dataDir),
  };
}
