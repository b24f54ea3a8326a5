// Configuration: every environment variable the platform reads is named here, once.
// `ENV_VARS` is the list the compose test checks compose.yaml against, and the README's table.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CHANNELS } from '../domain/updates/manifest.ts';
import { parseCheckInterval, type CheckSchedule } from '../domain/updates/schedule.ts';

export const ENV_VARS = {
  DATABASE_URL: 'PostgreSQL for read models and (without EVENTSTORE_URL) the log; unset: embedded server',
  DATABASE_POOL_SIZE: 'PostgreSQL connections one process opens at most (default 40); lower it when many processes share one server',
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
  ORCH_RUNNER_SERVER_URL: 'the orchestration API the runner talks to (default http:// + ORCH_LISTEN)',
  ORCH_RUNNER_WORK_DIR: 'where the runner puts agents\' working directories (default DATA_DIR/agents)',
  ORCH_RUNNER_MAX_ITERATIONS: 'model calls an agent loop may make before it fails (default 10)',
  ORCH_RUNNER_CONCURRENCY: 'agents one runner process runs at once (default 4)',
  ORCH_RUNNER_POLL_MS: 'how often the runner looks for queued agents and for stops and kills (default 1000)',
  ORCH_LLM_MODEL: 'model of a profile created without one (default local)',
  ORCH_AUDIT_SIGNING_KEY_FILE: 'file holding the Ed25519 seed (64 hex) that signs audit checkpoints (default: generated as DATA_DIR/audit-signing.key)',
  ORCH_GATE_WS_LIVE: '/ws/live needs a key, session or forward-auth identity; only 0/false/no/off opens it to anonymous status frames',
  ORCH_LLM_PROVIDER: 'model provider: local (offline, the default without a key), openai (any OpenAI-compatible API) or anthropic',
  ORCH_LLM_BASE_URL: 'base URL of the provider API (default https://api.openai.com/v1, or https://api.anthropic.com)',
  ORCH_LLM_API_KEY: 'the provider API key',
  ORCH_OPENAI_API_KEY: 'the openai provider key (when ORCH_LLM_API_KEY is unset)',
  ORCH_OPENAI_API_KEY_FILE: 'file holding ORCH_OPENAI_API_KEY',
  ORCH_LLM_PRICES_FILE: 'JSON file: model -> cents per million input, output and cache_read tokens (adds to the built-in table)',
  ORCH_LLM_RETRY_MAX: 'attempts of a model call when the provider is overloaded (default 3)',
  ORCH_LLM_RETRY_CEIL_MS: 'longest wait between model call attempts, Retry-After included (default 8000)',
  ORCH_LLM_TIMEOUT_MS: 'how long one model call attempt may take (default 60000)',
  ORCH_INTEGRATION_ENCRYPTION_KEY: '64 hex chars: seals chat-service bot and webhook tokens and the bots\' private keys (unset: the chat-service connector answers 503 integration_key_missing)',
  ORCH_INTEGRATION_ENCRYPTION_KEY_FILE: 'file holding ORCH_INTEGRATION_ENCRYPTION_KEY',
  ORCH_CHATSVC_CA_BUNDLE: 'PEM file of extra trusted roots for the chat-service connector\'s REST calls and sockets (unreadable: the start fails)',
  ORCH_CHATSVC_CATCHUP_SECS: 'after a reconnect, the bot answers missed messages younger than this (default 600)',
  ORCH_CHATSVC_SUPERVISOR_SECS: 'how often the bot socket supervisor starts missing sockets and stops stale ones (default 300)',
  ORCH_PUBLIC_CHAT_RPM: 'public chat requests per minute per client (default 20)',
  ORCH_PUBLIC_CHAT_MAX_CHARS: 'longest public chat message in characters (default 4000)',
  ORCH_TRUSTED_PROXY_HEADER: 'forwarding header the public chat limiter trusts: x-forwarded-for or x-real-ip (unset: none)',
  ORCH_TRUSTED_PROXY_HOPS: 'X-Forwarded-For entries (from the right) the public chat limiter reads (default 1; 0: one shared bucket)',
  ORCH_CORS_ALLOWED_ORIGINS: 'comma-separated exact origins allowed to call public chat from a browser (unset: no CORS)',
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
  CHATSVC_COMMUNITY_CREATION: 'who creates chat communities: admin (default: instance admins and the owner) or open (any user)',
  CHATSVC_TURN_URLS: 'comma-separated TURN/STUN URIs handed out by /api/account/turn-credentials',
  CHATSVC_BOOTSTRAP_SECRET: 'deploy secret gating POST /api/admin/bots/bootstrap-token (unset: that route answers 404)',
  CHATSVC_BOOTSTRAP_SECRET_FILE: 'file holding CHATSVC_BOOTSTRAP_SECRET',
  FEEDBACK_TRACKER_BASE_URL: 'issue tracker speaking the GitHub issues API that feedback is mirrored to (with _REPO and _TOKEN; unset: local only)',
  FEEDBACK_TRACKER_REPO: 'owner/name of the repository feedback issues are opened in',
  FEEDBACK_TRACKER_TOKEN: 'token for the feedback tracker (Authorization: Bearer)',
  CHATSVC_TURN_SECRET: 'shared secret of the TURN server (TURN REST credentials); unset: the route answers 503',
  CHATSVC_FILES_DIR: 'where uploaded files (content-addressed blobs) live (default DATA_DIR/files)',
  CHATSVC_MAX_UPLOAD_MB: 'largest uploaded file in MiB (default 100); the request body may be 10 MiB more',
  CHATSVC_UPLOAD_QUOTA_MB: 'stored uploads per user in MiB (default 500)',
  CHATSVC_OUTBOUND_ALLOW_LOOPBACK: 'test only (needs NODE_ENV=test): link previews and push endpoints may reach 127.0.0.0/8 and ::1 on any port',
  CHATSVC_DNS_SERVERS: 'comma-separated DNS servers (ip or ip:port) for outbound fetches such as link previews (default: the system resolver)',
  CHATSVC_VAPID_PRIVATE_KEY: 'web push VAPID private key, 32 bytes base64url (unset: made once by web-push and sealed under DATA_DIR); instances on separate DATA_DIRs must share it',
  CHATSVC_VAPID_PRIVATE_KEY_FILE: 'file holding CHATSVC_VAPID_PRIVATE_KEY',
  CHATSVC_VAPID_SUBJECT: 'the contact web push services see in the VAPID token: a mailto: or https: URL (default CHATSVC_PUBLIC_URL when https, else mailto:webpush@orchard.invalid)',
  CHATSVC_GIF_PROVIDER_URL: 'base URL of the GIF provider API (unset: the GIF routes answer 503 feature_disabled)',
  CHATSVC_GIF_PROVIDER_KEY: 'API key of the GIF provider (never logged)',
  CHATSVC_GIF_PROVIDER_API: 'the GIF provider protocol: giphy (default) or tenor',
  ORCH_UPDATES_CHECK_INTERVAL_SECS: 'seconds between update checks, plus 0-10% (default 21600; under 900 raised to 900; off or 0: no background check); both services',
  ORCH_UPDATER_CHANNEL: 'orchestration release channel: canary, beta or stable (default stable)',
  ORCH_UPDATE_MANIFEST_HOST: 'orchestration manifest host (serves /channels/<channel>.json); unset: no update checks',
  UPDATE_CHANNEL: 'chat release channel (default stable)',
  UPDATE_MANIFEST_HOST: 'chat manifest host; unset: no update checks',
  ORCH_UPDATER_PUBLIC_KEY_FILE: 'file holding the release public key (64 hex) that replaces the pinned one',
  ORCH_UPDATER_URL: 'where the orchestration service reaches the sidecar (default http:// + ORCH_UPDATER_LISTEN)',
  ORCH_UPDATER_API_TOKEN_FILE: 'file holding the sidecar HMAC token (at least 32 bytes), for the sidecar and the orchestration service',
  ORCH_UPDATER_DELIVERY_CHECK_SECS: 'seconds between delivery sweeps (GET /v1/delivery) of the orchestration service (default 3600; 0 off)',
  UPDATER_API_URL: 'where the chat service reaches the sidecar (default http:// + ORCH_UPDATER_LISTEN)',
  UPDATER_API_TOKEN_FILE: 'file holding the sidecar HMAC token for the chat service (default /run/secrets/updater_token)',
  ORCH_UPDATER_LISTEN: 'the updater sidecar listen address (default 127.0.0.1:8686)',
  ORCH_UPDATER_DATA_DIR: 'the sidecar journal, snapshots and downloads (default DATA_DIR/updater)',
  ORCH_UPDATER_RUNTIME: 'how the sidecar swaps releases: docker (default) or process',
  ORCH_UPDATER_RELEASES_DIR: 'process runtime: unpacked releases by version and the current symlink (default ORCH_UPDATER_DATA_DIR/releases)',
  ORCH_UPDATER_PG_BINDIR: 'process runtime: directory of pg_dump and psql (default: found on PATH)',
  ORCH_UPDATER_COMPOSE_PATH: 'docker runtime: the compose file of the stack (default compose.yaml in the working directory)',
  ORCH_UPDATER_DRAIN_SECS: 'seconds a drained service gets after SIGTERM before it is killed (default 30)',
  ORCH_UPDATER_HEALTH_GRACE_SECS: 'seconds a new release gets to answer healthy (default 120)',
  ORCH_UPDATER_FAILPOINTS: 'test faults, <state>=error|crash comma-separated; honoured only with serve sidecar --enable-failpoints',
} as const;

export type EnvName = keyof typeof ENV_VARS;
type Env = Record<string, string | undefined>;

export interface ListenAddress {
  host: string;
  port: number;
}

export interface Config {
  databaseUrl: string | null;
  /** Connections the platform's pool opens at most (its log listener is one more). */
  databasePoolSize: number;
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
  forwardAuth: {
    enabled: boolean;
    trustedNets: string[];
    userHeader: string;
    emailHeader: string;
    groupsHeader: string;
    groupsDelim: string;
    adminGroup: string;
    userGroup: string;
    /** ORCH_FORWARD_AUTH_LOGOUT_URL: the SSO sign-out page the web console links to after ending the local session. */
    logoutUrl: string | null;
  };
  registry: RegistryConfig;
  runner: RunnerConfig;
  updates: UpdatesConfig;
  updater: UpdaterConfig;
}

/** The orchestration service's chat-service connector (spec 1, "Chat-service integration"). */
export interface ChatsvcConnectorConfig {
  /** ORCH_INTEGRATION_ENCRYPTION_KEY(_FILE), 64 hex characters; null: every connector route answers 503. */
  integrationKeyHex: string | null;
  /** ORCH_CHATSVC_CA_BUNDLE: the PEM text (read at start) and its path. */
  caBundle: { path: string; pem: string } | null;
  catchupSecs: number;
  supervisorSecs: number;
}

function chatsvcConnectorConfig(env: Env): ChatsvcConnectorConfig {
  const key = secret(env, 'ORCH_INTEGRATION_ENCRYPTION_KEY', 'ORCH_INTEGRATION_ENCRYPTION_KEY_FILE').value;
  if (key !== null && !/^[0-9a-fA-F]{64}$/.test(key)) {
    throw new Error(`ORCH_INTEGRATION_ENCRYPTION_KEY must be exactly 64 hex characters (32 bytes), got ${key.length} characters`);
  }
  const caPath = env.ORCH_CHATSVC_CA_BUNDLE?.trim() || null;
  let caBundle: ChatsvcConnectorConfig['caBundle'] = null;
  if (caPath) {
    let pem: string;
    try {
      pem = readFileSync(caPath, 'utf8');
    } catch (error) {
      throw new Error(`ORCH_CHATSVC_CA_BUNDLE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${caPath}`);
    }
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`ORCH_CHATSVC_CA_BUNDLE holds no PEM certificate: ${caPath}`);
    caBundle = { path: caPath, pem };
  }
  return {
    integrationKeyHex: key,
    caBundle,
    catchupSecs: positiveInt(env.ORCH_CHATSVC_CATCHUP_SECS, 600, 'ORCH_CHATSVC_CATCHUP_SECS'),
    supervisorSecs: positiveInt(env.ORCH_CHATSVC_SUPERVISOR_SECS, 300, 'ORCH_CHATSVC_SUPERVISOR_SECS'),
  };
}

export interface RunnerConfig {
  /** No trailing slash. */
  serverUrl: string;
  workDir: string;
  maxIterations: number;
  concurrency: number;
  pollMs: number;
}

/** The runner's server: ORCH_RUNNER_SERVER_URL, else the orchestration listen address (a wildcard host reached on loopback). */
function runnerConfig(env: Env, dataDir: string, orch: ListenAddress): RunnerConfig {
  const host = orch.host === '0.0.0.0' || orch.host === '' ? '127.0.0.1' : orch.host === '::' ? '[::1]' : orch.host.includes(':') ? `[${orch.host}]` : orch.host;
  return {
    serverUrl: (env.ORCH_RUNNER_SERVER_URL?.trim() || `http://${host}:${orch.port}`).replace(/\/+$/, ''),
    workDir: path.resolve(env.ORCH_RUNNER_WORK_DIR?.trim() || path.join(dataDir, 'agents')),
    maxIterations: positiveInt(env.ORCH_RUNNER_MAX_ITERATIONS, 10, 'ORCH_RUNNER_MAX_ITERATIONS'),
    concurrency: positiveInt(env.ORCH_RUNNER_CONCURRENCY, 4, 'ORCH_RUNNER_CONCURRENCY'),
    pollMs: positiveInt(env.ORCH_RUNNER_POLL_MS, 1000, 'ORCH_RUNNER_POLL_MS'),
  };
}

export interface UpdateChannelConfig {
  channel: string;
  /** No trailing slash; null: checks are off. */
  host: string | null;
  /** Where this service reaches the sidecar, and the file holding the shared token. */
  sidecarUrl: string;
  tokenFile: string | null;
}

export interface UpdatesConfig {
  orch: UpdateChannelConfig;
  chat: UpdateChannelConfig;
  schedule: CheckSchedule;
  publicKeyFile: string | null;
  deliveryCheckSecs: number;
}

export interface UpdaterConfig {
  listen: ListenAddress;
  dataDir: string;
  tokenFile: string | null;
  runtime: 'docker' | 'process';
  releasesDir: string;
  pgBinDir: string | null;
  composeFile: string;
  drainSecs: number;
  healthGraceSecs: number;
  failpoints: string;
}

const channelOf = (value: string | undefined, name: string): string => {
  const channel = value?.trim().toLowerCase() || 'stable';
  if (!(CHANNELS as readonly string[]).includes(channel)) throw new Error(`${name} must be canary, beta or stable, got ${JSON.stringify(value)}`);
  return channel;
};

function nonNegativeInt(value: string | undefined, fallback: number, name: string): number {
  const text = value?.trim();
  if (!text) return fallback;
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a whole number of seconds, got ${JSON.stringify(text)}`);
  return Number(text);
}

function updatesConfig(env: Env, dataDir: string): { updates: UpdatesConfig; updater: UpdaterConfig } {
  const listen = parseListen(env.ORCH_UPDATER_LISTEN, '127.0.0.1:8686');
  const listenUrl = `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`;
  const host = (value: string | undefined) => value?.trim().replace(/\/+$/, '') || null;
  const runtime = env.ORCH_UPDATER_RUNTIME?.trim().toLowerCase() || 'docker';
  if (runtime !== 'docker' && runtime !== 'process') throw new Error(`ORCH_UPDATER_RUNTIME must be docker or process, got ${JSON.stringify(runtime)}`);
  const updaterDir = path.resolve(env.ORCH_UPDATER_DATA_DIR?.trim() || path.join(dataDir, 'updater'));
  const orchToken = env.ORCH_UPDATER_API_TOKEN_FILE?.trim() || null;
  return {
    updates: {
      orch: { channel: channelOf(env.ORCH_UPDATER_CHANNEL, 'ORCH_UPDATER_CHANNEL'), host: host(env.ORCH_UPDATE_MANIFEST_HOST), sidecarUrl: env.ORCH_UPDATER_URL?.trim().replace(/\/+$/, '') || listenUrl, tokenFile: orchToken },
      chat: {
        channel: channelOf(env.UPDATE_CHANNEL, 'UPDATE_CHANNEL'), host: host(env.UPDATE_MANIFEST_HOST),
        sidecarUrl: env.UPDATER_API_URL?.trim().replace(/\/+$/, '') || listenUrl,
        tokenFile: env.UPDATER_API_TOKEN_FILE?.trim() || '/run/secrets/updater_token',
      },
      schedule: parseCheckInterval(env.ORCH_UPDATES_CHECK_INTERVAL_SECS),
      publicKeyFile: env.ORCH_UPDATER_PUBLIC_KEY_FILE?.trim() || null,
      deliveryCheckSecs: nonNegativeInt(env.ORCH_UPDATER_DELIVERY_CHECK_SECS, 3600, 'ORCH_UPDATER_DELIVERY_CHECK_SECS'),
    },
    updater: {
      listen, dataDir: updaterDir, tokenFile: orchToken, runtime,
      releasesDir: path.resolve(env.ORCH_UPDATER_RELEASES_DIR?.trim() || path.join(updaterDir, 'releases')),
      pgBinDir: env.ORCH_UPDATER_PG_BINDIR?.trim() || null,
      composeFile: path.resolve(env.ORCH_UPDATER_COMPOSE_PATH?.trim() || 'compose.yaml'),
      drainSecs: nonNegativeInt(env.ORCH_UPDATER_DRAIN_SECS, 30, 'ORCH_UPDATER_DRAIN_SECS'),
      healthGraceSecs: positiveInt(env.ORCH_UPDATER_HEALTH_GRACE_SECS, 120, 'ORCH_UPDATER_HEALTH_GRACE_SECS'),
      failpoints: env.ORCH_UPDATER_FAILPOINTS?.trim() ?? '',
    },
  };
}

export interface RegistryConfig {
  /** No trailing slash; null when unset. */
  publicUrl: string | null;
  tokenRatePerMin: number;
  /** Null unless an issuer and a client id are configured. */
  oidc: { issuer: string; clientId: string; clientSecret: string | null; adminGroup: string; groupsClaim: string } | null;
  forwardAuth: { trustedNets: string[]; userHeader: string; emailHeader: string; groupsHeader: string; groupsDelim: string; adminGroup: string };
}

/** ORCH_FORWARD_AUTH_LOGOUT_URL: an http(s) URL (the console links to it), or unset. */
function logoutUrl(value: string | undefined): string | null {
  const text = value?.trim();
  if (!text) return null;
  if (!/^https?:\/\/\S+$/i.test(text)) throw new Error(`ORCH_FORWARD_AUTH_LOGOUT_URL must be an http(s) URL, got ${JSON.stringify(text)}`);
  return text;
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

export type LlmProviderName = 'local' | 'openai' | 'anthropic';

export interface LlmConfig {
  provider: LlmProviderName;
  /** Null: the provider's own default. */
  baseUrl: string | null;
  apiKey: string | null;
  pricesFile: string | null;
  retryMax: number;
  retryCeilMs: number;
  timeoutMs: number;
}

export interface PublicChatConfig {
  ratePerMin: number;
  maxChars: number;
  /** The one forwarding header trusted for the client address; null: none, the TCP peer counts. */
  trustedProxyHeader: 'x-forwarded-for' | 'x-real-ip' | null;
  trustedProxyHops: number;
  /** Exact origins; empty: no CORS layer. */
  corsOrigins: string[];
}

function llmConfig(env: Env): LlmConfig {
  const llmKey = env.ORCH_LLM_API_KEY?.trim() || null;
  const openAiKey = secret(env, 'ORCH_OPENAI_API_KEY', 'ORCH_OPENAI_API_KEY_FILE').value;
  const named = env.ORCH_LLM_PROVIDER?.trim().toLowerCase();
  if (named && named !== 'local' && named !== 'openai' && named !== 'anthropic') {
    throw new Error(`ORCH_LLM_PROVIDER must be local, openai or anthropic, got ${JSON.stringify(env.ORCH_LLM_PROVIDER)}`);
  }
  // Unset: the local model, unless a key says which network provider is meant.
  const provider = (named || (llmKey || openAiKey ? 'openai' : 'local')) as LlmProviderName;
  return {
    provider,
    baseUrl: env.ORCH_LLM_BASE_URL?.trim() || null,
    apiKey: provider === 'openai' ? llmKey ?? openAiKey : provider === 'anthropic' ? llmKey : null,
    pricesFile: env.ORCH_LLM_PRICES_FILE?.trim() || null,
    retryMax: positiveInt(env.ORCH_LLM_RETRY_MAX, 3, 'ORCH_LLM_RETRY_MAX'),
    retryCeilMs: positiveInt(env.ORCH_LLM_RETRY_CEIL_MS, 8000, 'ORCH_LLM_RETRY_CEIL_MS'),
    timeoutMs: positiveInt(env.ORCH_LLM_TIMEOUT_MS, 60_000, 'ORCH_LLM_TIMEOUT_MS'),
  };
}

function publicChatConfig(env: Env): PublicChatConfig {
  const header = env.ORCH_TRUSTED_PROXY_HEADER?.trim().toLowerCase() || null;
  if (header !== null && header !== 'x-forwarded-for' && header !== 'x-real-ip') {
    throw new Error(`ORCH_TRUSTED_PROXY_HEADER must be x-forwarded-for or x-real-ip, got ${JSON.stringify(env.ORCH_TRUSTED_PROXY_HEADER)}`);
  }
  const hopsText = env.ORCH_TRUSTED_PROXY_HOPS?.trim();
  const hops = hopsText ? Number(hopsText) : 1;
  if (!Number.isInteger(hops) || hops < 0) throw new Error(`ORCH_TRUSTED_PROXY_HOPS must be a whole number (0 or more), got ${JSON.stringify(hopsText)}`);
  return {
    ratePerMin: positiveInt(env.ORCH_PUBLIC_CHAT_RPM, 20, 'ORCH_PUBLIC_CHAT_RPM'),
    maxChars: positiveInt(env.ORCH_PUBLIC_CHAT_MAX_CHARS, 4000, 'ORCH_PUBLIC_CHAT_MAX_CHARS'),
    trustedProxyHeader: header,
    trustedProxyHops: hops,
    corsOrigins: (env.ORCH_CORS_ALLOWED_ORIGINS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
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
  /** `admin`: only instance admins and the owner create communities; `open`: anyone. */
  communityCreation: 'admin' | 'open';
  /** The deploy secret of the bootstrap-token route; null: the route answers 404. */
  bootstrapSecret: string | null;
  /** Where feedback is mirrored (all three set), else null. */
  feedbackTracker: { baseUrl: string; repo: string; token: string } | null;
  files: ChatFilesConfig;
  outbound: ChatOutboundConfig;
  gifs: ChatGifConfig | null;
  push: ChatPushConfig;
}

export interface ChatPushConfig {
  /** Configured VAPID private key (base64url, 32 bytes); null: made once and sealed in `vapidFile`. */
  vapidPrivateKey: string | null;
  /** The VAPID key pair: made once (web-push), kept here sealed with the server key. */
  vapidFile: string;
  /** The VAPID `sub` claim: a mailto: or https: URL. */
  subject: string;
}

function chatPush(env: Env, dataDir: string): ChatPushConfig {
  const configured = env.CHATSVC_VAPID_SUBJECT?.trim();
  const publicUrl = env.CHATSVC_PUBLIC_URL?.trim() ?? '';
  const subject = configured || (/^https:\/\//i.test(publicUrl) ? publicUrl : 'mailto:webpush@orchard.invalid');
  if (!/^(mailto:\S+@\S+|https:\/\/\S+)$/i.test(subject)) throw new Error(`CHATSVC_VAPID_SUBJECT must be a mailto: or https: URL, got ${JSON.stringify(configured)}`);
  const vapidPrivateKey = secret(env, 'CHATSVC_VAPID_PRIVATE_KEY', 'CHATSVC_VAPID_PRIVATE_KEY_FILE').value;
  if (vapidPrivateKey && Buffer.from(vapidPrivateKey, 'base64url').length !== 32) throw new Error('CHATSVC_VAPID_PRIVATE_KEY must be 32 bytes, base64url');
  return { vapidPrivateKey, vapidFile: path.join(dataDir, 'chat-vapid.sealed'), subject };
}

export interface ChatFilesConfig {
  dir: string;
  maxUploadBytes: number;
  quotaBytes: number;
}

export interface ChatOutboundConfig {
  /** Test only: 127.0.0.0/8 and ::1 on any port are reachable. */
  allowLoopback: boolean;
  /** Resolver servers (`ip` or `ip:port`); empty: the system resolver. */
  dnsServers: string[];
}

export interface ChatGifConfig {
  url: string;
  key: string;
  api: 'giphy' | 'tenor';
}

function chatOutbound(env: Env): ChatOutboundConfig {
  const allowLoopback = optIn(env.CHATSVC_OUTBOUND_ALLOW_LOOPBACK);
  if (allowLoopback && env.NODE_ENV !== 'test') throw new Error('CHATSVC_OUTBOUND_ALLOW_LOOPBACK is for tests only: it needs NODE_ENV=test');
  return { allowLoopback, dnsServers: (env.CHATSVC_DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean) };
}

function chatGifs(env: Env): ChatGifConfig | null {
  const url = env.CHATSVC_GIF_PROVIDER_URL?.trim();
  if (!url) return null;
  const api = (env.CHATSVC_GIF_PROVIDER_API?.trim().toLowerCase() || 'giphy');
  if (api !== 'giphy' && api !== 'tenor') throw new Error(`CHATSVC_GIF_PROVIDER_API must be giphy or tenor, got ${JSON.stringify(env.CHATSVC_GIF_PROVIDER_API)}`);
  return { url: url.replace(/\/+$/, ''), key: env.CHATSVC_GIF_PROVIDER_KEY?.trim() ?? '', api };
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

function communityCreation(value: string | undefined): 'admin' | 'open' {
  const mode = (value ?? '').trim().toLowerCase() || 'admin';
  if (mode !== 'admin' && mode !== 'open') throw new Error(`CHATSVC_COMMUNITY_CREATION must be admin or open, got ${JSON.stringify(value)}`);
  return mode;
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
    databasePoolSize: positiveInt(env.DATABASE_POOL_SIZE, 40, 'DATABASE_POOL_SIZE'),
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
    llm: llmConfig(env),
    publicChat: publicChatConfig(env),
    cookieSecure: optIn(env.ORCH_COOKIE_SECURE),
    auditSigningKeyFile: path.resolve(env.ORCH_AUDIT_SIGNING_KEY_FILE?.trim() || path.join(dataDir, 'audit-signing.key')),
    auditSigningKeyConfigured: !!env.ORCH_AUDIT_SIGNING_KEY_FILE?.trim(),
    gateWsLive: optOut(env.ORCH_GATE_WS_LIVE),
    chat: {
      registration: registrationMode(env.CHATSVC_REGISTRATION),
      publicUrl: env.CHATSVC_PUBLIC_URL?.trim() ?? '',
      jwtSecret: secret(env, 'CHATSVC_JWT_SECRET', 'CHATSVC_JWT_SECRET_FILE').value,
      jwtSecretFile: path.join(dataDir, 'chat-jwt.sealed'),
      authRatePerMin: positiveInt(env.CHATSVC_AUTH_RATE_PER_MIN, 10, 'CHATSVC_AUTH_RATE_PER_MIN'),
      apiRatePerSec: positiveInt(env.CHATSVC_API_RATE_PER_SEC, 20, 'CHATSVC_API_RATE_PER_SEC'),
      turnUrls: (env.CHATSVC_TURN_URLS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      turnSecret: env.CHATSVC_TURN_SECRET?.trim() || null,
      communityCreation: communityCreation(env.CHATSVC_COMMUNITY_CREATION),
      bootstrapSecret: secret(env, 'CHATSVC_BOOTSTRAP_SECRET', 'CHATSVC_BOOTSTRAP_SECRET_FILE').value,
      feedbackTracker: env.FEEDBACK_TRACKER_BASE_URL?.trim() && env.FEEDBACK_TRACKER_REPO?.trim() && env.FEEDBACK_TRACKER_TOKEN?.trim()
        ? { baseUrl: env.FEEDBACK_TRACKER_BASE_URL.trim().replace(/\/+$/, ''), repo: env.FEEDBACK_TRACKER_REPO.trim(), token: env.FEEDBACK_TRACKER_TOKEN.trim() }
        : null,
      files: {
        dir: path.resolve(env.CHATSVC_FILES_DIR?.trim() || path.join(dataDir, 'files')),
        maxUploadBytes: positiveInt(env.CHATSVC_MAX_UPLOAD_MB, 100, 'CHATSVC_MAX_UPLOAD_MB') * 1024 * 1024,
        quotaBytes: positiveInt(env.CHATSVC_UPLOAD_QUOTA_MB, 500, 'CHATSVC_UPLOAD_QUOTA_MB') * 1024 * 1024,
      },
      outbound: chatOutbound(env),
      gifs: chatGifs(env),
      push: chatPush(env, dataDir),
    },
    chatsvc: chatsvcConnectorConfig(env),
    forwardAuth: {
      enabled: optIn(env.ORCH_FORWARD_AUTH),
      trustedNets: (env.ORCH_FORWARD_AUTH_TRUSTED_NETS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
      userHeader: env.ORCH_FORWARD_AUTH_USER_HEADER?.trim() || 'X-Idp-Username',
      emailHeader: env.ORCH_FORWARD_AUTH_EMAIL_HEADER?.trim() || 'X-Idp-Email',
      groupsHeader: env.ORCH_FORWARD_AUTH_GROUPS_HEADER?.trim() || 'X-Idp-Groups',
      groupsDelim: env.ORCH_FORWARD_AUTH_GROUPS_DELIM || '|',
      adminGroup: env.ORCH_GROUP_ADMIN?.trim() || 'orch-admin',
      userGroup: env.ORCH_GROUP_USER?.trim() || 'orch-user',
      logoutUrl: logoutUrl(env.ORCH_FORWARD_AUTH_LOGOUT_URL),
    },
    registry: registryConfig(env),
    runner: runnerConfig(env, dataDir, parseListen(env.ORCH_LISTEN, '127.0.0.1:8585')),
    ...updatesConfig(env, dataDir),
  };
}
