// Configuration: every environment variable the platform reads is named here, once.
// `ENV_VARS` is the list the compose test checks compose.yaml against, and the README's table.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const ENV_VARS = {
  DATABASE_URL: 'PostgreSQL for read models and (without EVENTSTORE_URL) the log; unset: embedded server',
  EVENTSTORE_URL: 'EventStoreDB connection string (esdb://host:2113?tls=false); the log moves there',
  DATA_DIR: 'where the embedded PostgreSQL and generated secrets live (default ./data)',
  LOG_LEVEL: 'debug, info (default), warn, error',
  ORCH_LISTEN: 'orchestration listen address (default 127.0.0.1:8585)',
  CHATSVC_LISTEN: 'chat service listen address (default 127.0.0.1:8600)',
  REGISTRY_LISTEN: 'registry listen address (default 127.0.0.1:8400)',
  ADMIN_API_KEY: 'the admin account key; creates (or rotates) the admin at start',
  ADMIN_API_KEY_FILE: 'file holding the admin key (required form when a runner key is set)',
  ORCH_SECRET_KEY: '64 hex chars: the key sealing secrets at rest (generated under DATA_DIR when unset)',
  ORCH_SECRET_KEY_FILE: 'file holding ORCH_SECRET_KEY',
  ORCH_RUNNER_API_KEY: 'the runner service principal key',
  ORCH_ENFORCE_ADMIN_ROLE: 'admin-role enforcement; only 0/false/no/off disables it',
  ORCH_COOKIE_SECURE: 'mark session cookies Secure even without TLS on the socket',
  ORCH_FORWARD_AUTH: 'trust identity headers from a forward-auth proxy',
  ORCH_FORWARD_AUTH_TRUSTED_NETS: 'comma-separated CIDRs whose identity headers are trusted',
  ORCH_FORWARD_AUTH_USER_HEADER: 'default X-Idp-Username',
  ORCH_FORWARD_AUTH_EMAIL_HEADER: 'default X-Idp-Email',
  ORCH_FORWARD_AUTH_GROUPS_HEADER: 'default X-Idp-Groups',
  ORCH_FORWARD_AUTH_GROUPS_DELIM: 'default |',
  ORCH_GROUP_ADMIN: 'group mapped to role admin (default orch-admin)',
  ORCH_GROUP_USER: 'group mapped to role user (default orch-user)',
  ORCH_METRICS_TOKEN: 'when set, GET /metrics needs Authorization: Bearer <token>',
  ORCH_METRICS_TOKEN_FILE: 'file holding ORCH_METRICS_TOKEN',
  REDIS_URL: 'Redis for the shared rate limiter (redis://host:6379); unset: counters live in each process',
  ORCH_LLM_MODEL: 'model of a profile created without one (default local)',
  REGISTRY_PUBLIC_URL: 'the registry\'s public base URL (https://registry.example.com): OIDC redirect URI and Secure cookies',
  REGISTRY_TOKEN_RATE_PER_MIN: 'requests per minute allowed to each registry machine token (default 600)',
  REGISTRY_OIDC_ISSUER: 'OIDC issuer URL; set with the client id to enable OIDC sign-in',
  REGISTRY_OIDC_CLIENT_ID: 'OIDC client id of the registry',
  REGISTRY_OIDC_CLIENT_SECRET: 'OIDC client secret (unset: a public client, PKCE only)',
  REGISTRY_OIDC_CLIENT_SECRET_FILE: 'file holding REGISTRY_OIDC_CLIENT_SECRET',
  REGISTRY_OIDC_ADMIN_GROUP: 'group (in the groups claim) mapped to registry admin (default registry-admin)',
  REGISTRY_OIDC_GROUPS_CLAIM: 'name of the groups claim (default groups)',
  REGISTRY_FORWARD_AUTH_TRUSTED_NETS: 'comma-separated CIDRs whose identity headers the registry trusts (only without OIDC)',
  REGISTRY_FORWARD_AUTH_USER_HEADER: 'default X-Idp-Username',
  REGISTRY_FORWARD_AUTH_EMAIL_HEADER: 'default X-Idp-Email',
  REGISTRY_FORWARD_AUTH_GROUPS_HEADER: 'default X-Idp-Groups',
  REGISTRY_FORWARD_AUTH_GROUPS_DELIM: 'default |',
  REGISTRY_ADMIN_GROUP: 'forward-auth group mapped to registry admin (default registry-admin)',
  CHATSVC_REGISTRATION: 'chat registration mode: open (default), invite (needs an admin-minted invite_code) or closed',
  CHATSVC_PUBLIC_URL: 'the chat service\'s public base URL, shown by GET /api/auth/config (default: empty)',
  CHATSVC_JWT_SECRET: 'HS256 secret of chat access tokens (unset: generated once, sealed under DATA_DIR)',
  CHATSVC_JWT_SECRET_FILE: 'file holding CHATSVC_JWT_SECRET',
  CHATSVC_AUTH_RATE_PER_MIN: 'requests per minute per client address on the chat auth routes (default 10)',
  CHATSVC_API_RATE_PER_SEC: 'sustained chat API requests per second per user; the burst is twice this (default 20)',
  CHATSVC_TURN_URLS: 'comma-separated TURN/STUN URIs handed out by /api/account/turn-credentials',
  CHATSVC_TURN_SECRET: 'shared secret of the TURN server (TURN REST credentials); unset: the route answers 503',
} as const;

export type EnvName = keyof typeof ENV_VARS;
type Env = Record<string, string | undefined>;

export interface ListenAddress {
  host: string;
  port: number;
}

export interface Config {
  databaseUrl: string | null;
  eventStoreUrl: string | null;
  dataDir: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
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
  cookieSecure: boolean;
  chat: ChatConfig;
  forwardAuth: {
    enabled: boolean;
    trustedNets: string[];
    userHeader: string;
    emailHeader: string;
    groupsHeader: string;
    groupsDelim: string;
    adminGroup: string;
    userGroup: string;
  };
  registry: RegistryConfig;
}

export interface RegistryConfig {
  /** No trailing slash; null when unset. */
  publicUrl: string | null;
  tokenRatePerMin: number;
  /** Null unless an issuer and a client id are configured. */
  oidc: { issuer: string; clientId: string; clientSecret: string | null; adminGroup: string; groupsClaim: string } | null;
  forwardAuth: { trustedNets: string[]; userHeader: string; emailHeader: string; groupsHeader: string; groupsDelim: string; adminGroup: string };
}

function registryConfig(env: Env): RegistryConfig {
  const issuer = env.REGISTRY_OIDC_ISSUER?.trim();
  const clientId = env.REGISTRY_OIDC_CLIENT_ID?.trim();
  return {
    publicUrl: env.REGISTRY_PUBLIC_URL?.trim().replace(/\/+$/, '') || null,
    tokenRatePerMin: positiveInt(env.REGISTRY_TOKEN_RATE_PER_MIN, 600, 'REGISTRY_TOKEN_RATE_PER_MIN'),
    oidc: issuer && clientId ? {
      issuer,
      clientId,
      clientSecret: secret(env, 'REGISTRY_OIDC_CLIENT_SECRET', 'REGISTRY_OIDC_CLIENT_SECRET_FILE').value,
      adminGroup: env.REGISTRY_OIDC_ADMIN_GROUP?.trim() || 'registry-admin',
      groupsClaim: env.REGISTRY_OIDC_GROUPS_CLAIM?.trim() || 'groups',
    } : null,
    forwardAuth: {
      trustedNets: (env.REGISTRY_FORWARD_AUTH_TRUSTED_NETS ?? '').split(',').map((x) => x.trim()).filter(Boolean),
      userHeader: env.REGISTRY_FORWARD_AUTH_USER_HEADER?.trim() || 'X-Idp-Username',
      emailHeader: env.REGISTRY_FORWARD_AUTH_EMAIL_HEADER?.trim() || 'X-Idp-Email',
      groupsHeader: env.REGISTRY_FORWARD_AUTH_GROUPS_HEADER?.trim() || 'X-Idp-Groups',
      groupsDelim: env.REGISTRY_FORWARD_AUTH_GROUPS_DELIM || '|',
      adminGroup: env.REGISTRY_ADMIN_GROUP?.trim() || 'registry-admin',
    },
  };
}

export type RegistrationMode = 'open' | 'invite' | 'closed';

export interface ChatConfig {
  registration: RegistrationMode;
  publicUrl: string;
  /** Configured access-token secret; null: generated once and sealed under DATA_DIR. */
  jwtSecret: string | null;
  jwtSecretFile: string;
  authRatePerMin: number;
  apiRatePerSec: number;
  turnUrls: string[];
  turnSecret: string | null;
}

const FALSY = new Set(['0', 'false', 'no', 'off']);
const TRUTHY = new Set(['1', 'true', 'yes', 'on']);

/** An opt-out flag: only an explicit falsy value turns it off. */
export function optOut(value: string | undefined): boolean {
  return !FALSY.has((value ?? '').trim().toLowerCase());
}

/** An opt-in flag: only an explicit truthy value turns it on. */
export function optIn(value: string | undefined): boolean {
  return TRUTHY.has((value ?? '').trim().toLowerCase());
}

export function parseListen(value: string | undefined, fallback: string): ListenAddress {
  const text = (value ?? '').trim() || fallback;
  const match = /^\[?([^\]]*?)\]?:(\d+)$/.exec(text);
  if (!match) throw new Error(`not a listen address (host:port): ${text}`);
  return { host: match[1] || '127.0.0.1', port: Number(match[2]) };
}

/** A value given directly or through `<NAME>_FILE`; the direct value wins. */
function secret(env: Env, name: string, fileName: string): { value: string | null; literal: boolean } {
  const direct = env[name]?.trim();
  if (direct) return { value: direct, literal: true };
  const file = env[fileName]?.trim();
  if (file) {
    if (!existsSync(file)) throw new Error(`${fileName} names a file that does not exist: ${file}`);
    return { value: readFileSync(file, 'utf8').trim() || null, literal: false };
  }
  return { value: null, literal: false };
}

function positiveInt(value: string | undefined, fallback: number, name: string): number {
  const text = value?.trim();
  if (!text) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}

function registrationMode(value: string | undefined): RegistrationMode {
  const mode = (value?.trim().toLowerCase() || 'open');
  if (mode !== 'open' && mode !== 'invite' && mode !== 'closed') throw new Error(`CHATSVC_REGISTRATION must be open, invite or closed, got ${JSON.stringify(value)}`);
  return mode;
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = path.resolve(env.DATA_DIR?.trim() || './data');
  const admin = secret(env, 'ADMIN_API_KEY', 'ADMIN_API_KEY_FILE');
  const sealing = secret(env, 'ORCH_SECRET_KEY', 'ORCH_SECRET_KEY_FILE');
  const level = (env.LOG_LEVEL?.trim().toLowerCase() || 'info') as Config['logLevel'];
  return {
    databaseUrl: env.DATABASE_URL?.trim() || null,
    eventStoreUrl: env.EVENTSTORE_URL?.trim() || null,
    dataDir,
    logLevel: ['debug', 'info', 'warn', 'error'].includes(level) ? level : 'info',
    listen: {
      orch: parseListen(env.ORCH_LISTEN, '127.0.0.1:8585'),
      chat: parseListen(env.CHATSVC_LISTEN, '127.0.0.1:8600'),
      registry: parseListen(env.REGISTRY_LISTEN, '127.0.0.1:8400'),
    },
    adminApiKey: admin.value,
    adminApiKeyLiteral: admin.literal,
    secretKeyHex: sealing.value,
    secretKeyFile: env.ORCH_SECRET_KEY_FILE?.trim() || path.join(dataDir, 'secret.key'),
    runnerApiKey: env.ORCH_RUNNER_API_KEY?.trim() || null,
    enforceAdminRole: optOut(env.ORCH_ENFORCE_ADMIN_ROLE),
    metricsToken: secret(env, 'ORCH_METRICS_TOKEN', 'ORCH_METRICS_TOKEN_FILE').value,
    redisUrl: env.REDIS_URL?.trim() || null,
    llmModel: env.ORCH_LLM_MODEL?.trim() || null,
    cookieSecure: optIn(env.ORCH_COOKIE_SECURE),
    chat: {
      registration: registrationMode(env.CHATSVC_REGISTRATION),
      publicUrl: env.CHATSVC_PUBLIC_URL?.trim() ?? '',
      jwtSecret: secret(env, 'CHATSVC_JWT_SECRET', 'CHATSVC_JWT_SECRET_FILE').value,
      jwtSecretFile: path.join(dataDir, 'chat-jwt.sealed'),
      authRatePerMin: positiveInt(env.CHATSVC_AUTH_RATE_PER_MIN, 10, 'CHATSVC_AUTH_RATE_PER_MIN'),
      apiRatePerSec: positiveInt(env.CHATSVC_API_RATE_PER_SEC, 20, 'CHATSVC_API_RATE_PER_SEC'),
      turnUrls: (env.CHATSVC_TURN_URLS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      turnSecret: env.CHATSVC_TURN_SECRET?.trim() || null,
    },
    forwardAuth: {
      enabled: optIn(env.ORCH_FORWARD_AUTH),
      trustedNets: (env.ORCH_FORWARD_AUTH_TRUSTED_NETS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      userHeader: env.ORCH_FORWARD_AUTH_USER_HEADER?.trim() || 'X-Idp-Username',
      emailHeader: env.ORCH_FORWARD_AUTH_EMAIL_HEADER?.trim() || 'X-Idp-Email',
      groupsHeader: env.ORCH_FORWARD_AUTH_GROUPS_HEADER?.trim() || 'X-Idp-Groups',
      groupsDelim: env.ORCH_FORWARD_AUTH_GROUPS_DELIM || '|',
      adminGroup: env.ORCH_GROUP_ADMIN?.trim() || 'orch-admin',
      userGroup: env.ORCH_GROUP_USER?.trim() || 'orch-user',
    },
    registry: registryConfig(env),
  };
}
