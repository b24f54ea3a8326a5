// The orchestration service: its address, admin and access rules, forward auth, public chat,
// and its connector to the chat service.

import {
  delimiter,
  type EnvVars,
  httpUrl,
  list,
  listen,
  type ListenAddress,
  offUnlessOn,
  oneOf,
  onUnlessOff,
  pemFile,
  positiveInt,
  problem,
  secretValue,
  text,
  type Values,
  wholeNumber,
} from './kinds.ts';

export const orchestrationVars = {
  ORCH_LISTEN: listen({ description: 'orchestration listen address', default: '127.0.0.1:8585' }),
  ADMIN_API_KEY: text({ description: 'the admin account key; creates (or rotates) the admin at start', secret: true }),
  ADMIN_API_KEY_FILE: text({
    description: 'file holding the admin key (the required form when a runner key is set)',
    secret: true,
  }),
  ORCH_ENFORCE_ADMIN_ROLE: onUnlessOff({
    description: 'admin-role enforcement; only 0/false/no/off (any case) disables it',
  }),
  ORCH_COOKIE_SECURE: offUnlessOn({ description: 'mark session cookies Secure even without TLS on the socket' }),
  ORCH_GATE_WS_LIVE: onUnlessOff({
    description:
      '`/ws/live` needs a key, session or forward-auth identity; only 0/false/no/off (any case) opens its status frames to anonymous sockets',
  }),
  ORCH_METRICS_TOKEN: text({
    description: 'when set, `GET /metrics` needs `Authorization: Bearer <token>`',
    secret: true,
  }),
  ORCH_METRICS_TOKEN_FILE: text({ description: 'file holding ORCH_METRICS_TOKEN', secret: true }),
  ORCH_FORWARD_AUTH: offUnlessOn({ description: 'trust identity headers from a forward-auth proxy' }),
  ORCH_FORWARD_AUTH_TRUSTED_NETS: list({
    description: 'comma-separated CIDRs (IPv4 and IPv6) whose identity headers are trusted',
  }),
  ORCH_FORWARD_AUTH_USER_HEADER: text({ description: 'header naming the user', default: 'X-Idp-Username' }),
  ORCH_FORWARD_AUTH_EMAIL_HEADER: text({ description: 'header carrying the email', default: 'X-Idp-Email' }),
  ORCH_FORWARD_AUTH_GROUPS_HEADER: text({ description: 'header listing the groups', default: 'X-Idp-Groups' }),
  ORCH_FORWARD_AUTH_GROUPS_DELIM: delimiter({ description: 'separator of the groups header', default: '|' }),
  ORCH_FORWARD_AUTH_LOGOUT_URL: httpUrl({
    description:
      "the SSO's sign-out page (http or https), linked by the web console after it ends the local session; unset: no link",
  }),
  ORCH_GROUP_ADMIN: text({ description: 'group mapped to role admin', default: 'orch-admin' }),
  ORCH_GROUP_USER: text({ description: 'group mapped to role user', default: 'orch-user' }),
  ORCH_PUBLIC_CHAT_RPM: positiveInt({ description: 'public chat requests a minute per client', default: 20 }),
  ORCH_PUBLIC_CHAT_MAX_CHARS: positiveInt({ description: 'longest public chat message in characters', default: 4000 }),
  ORCH_TRUSTED_PROXY_HEADER: oneOf(['x-forwarded-for', 'x-real-ip'], {
    description:
      'the one forwarding header the public chat limiter reads: x-forwarded-for or x-real-ip; unset: none, the TCP peer counts',
  }),
  ORCH_TRUSTED_PROXY_HOPS: wholeNumber({
    description: 'X-Forwarded-For entries the public chat limiter reads from the right (0: one shared bucket)',
    default: 1,
  }),
  ORCH_CORS_ALLOWED_ORIGINS: list({
    description: 'comma-separated exact origins allowed to call public chat from a browser; unset: no CORS',
  }),
  ORCH_INTEGRATION_ENCRYPTION_KEY: text({
    description:
      "64 hex characters (32 bytes): seals the chat-service bot tokens (in the log), the webhook tokens and the bots' device state. Unset: every connector route answers 503 `integration_key_missing` and health shows `disabled`; a malformed value stops the start",
    secret: true,
  }),
  ORCH_INTEGRATION_ENCRYPTION_KEY_FILE: text({
    description: 'file holding ORCH_INTEGRATION_ENCRYPTION_KEY (the container form)',
    secret: true,
  }),
  ORCH_CHATSVC_CA_BUNDLE: pemFile({
    description:
      "PEM file of extra trusted roots for the connector's REST calls and bot sockets; unreadable (or no certificate in it) stops the start",
  }),
  ORCH_CHATSVC_CATCHUP_SECS: positiveInt({
    description:
      'after a (re)connect, the bot answers missed messages younger than this; older ones are decrypted but not answered',
    default: 600,
  }),
  ORCH_CHATSVC_SUPERVISOR_SECS: positiveInt({
    description: 'how often the supervisor starts missing bot sockets, retries standby ones and stops stale ones',
    default: 300,
  }),
} satisfies EnvVars;

type V = Values<typeof orchestrationVars>;

export interface ForwardAuthConfig {
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

/** The orchestration service's chat-service connector (spec 1, "Chat-service integration"). */
export interface ChatsvcConnectorConfig {
  /** ORCH_INTEGRATION_ENCRYPTION_KEY(_FILE), 64 hex characters; null: every connector route answers 503. */
  integrationKeyHex: string | null;
  /** ORCH_CHATSVC_CA_BUNDLE: the PEM text (read at start) and its path. */
  caBundle: { path: string; pem: string } | null;
  catchupSecs: number;
  supervisorSecs: number;
}

export interface OrchestrationConfig {
  listen: ListenAddress;
  adminApiKey: string | null;
  /** True when the admin key sits as a literal in the environment (not a file). */
  adminApiKeyLiteral: boolean;
  enforceAdminRole: boolean;
  cookieSecure: boolean;
  /** ORCH_GATE_WS_LIVE: /ws/live refuses anonymous upgrades unless explicitly falsy. */
  gateWsLive: boolean;
  /** When set, /metrics requires it as a Bearer token. */
  metricsToken: string | null;
  forwardAuth: ForwardAuthConfig;
  publicChat: PublicChatConfig;
  chatsvc: ChatsvcConnectorConfig;
}

export function orchestrationConfig(v: V): OrchestrationConfig {
  const admin = secretValue(v.ADMIN_API_KEY, v.ADMIN_API_KEY_FILE, 'ADMIN_API_KEY_FILE');
  return {
    listen: v.ORCH_LISTEN,
    adminApiKey: admin.value,
    adminApiKeyLiteral: admin.literal,
    enforceAdminRole: v.ORCH_ENFORCE_ADMIN_ROLE,
    cookieSecure: v.ORCH_COOKIE_SECURE,
    gateWsLive: v.ORCH_GATE_WS_LIVE,
    metricsToken: secretValue(v.ORCH_METRICS_TOKEN, v.ORCH_METRICS_TOKEN_FILE, 'ORCH_METRICS_TOKEN_FILE').value,
    forwardAuth: {
      enabled: v.ORCH_FORWARD_AUTH,
      trustedNets: v.ORCH_FORWARD_AUTH_TRUSTED_NETS,
      userHeader: v.ORCH_FORWARD_AUTH_USER_HEADER,
      emailHeader: v.ORCH_FORWARD_AUTH_EMAIL_HEADER,
      groupsHeader: v.ORCH_FORWARD_AUTH_GROUPS_HEADER,
      groupsDelim: v.ORCH_FORWARD_AUTH_GROUPS_DELIM,
      adminGroup: v.ORCH_GROUP_ADMIN,
      userGroup: v.ORCH_GROUP_USER,
      logoutUrl: v.ORCH_FORWARD_AUTH_LOGOUT_URL,
    },
    publicChat: {
      ratePerMin: v.ORCH_PUBLIC_CHAT_RPM,
      maxChars: v.ORCH_PUBLIC_CHAT_MAX_CHARS,
      trustedProxyHeader: v.ORCH_TRUSTED_PROXY_HEADER,
      trustedProxyHops: v.ORCH_TRUSTED_PROXY_HOPS,
      corsOrigins: v.ORCH_CORS_ALLOWED_ORIGINS,
    },
    chatsvc: {
      integrationKeyHex: integrationKey(v),
      caBundle: v.ORCH_CHATSVC_CA_BUNDLE,
      catchupSecs: v.ORCH_CHATSVC_CATCHUP_SECS,
      supervisorSecs: v.ORCH_CHATSVC_SUPERVISOR_SECS,
    },
  };
}

// Checked after the file is read: the key may come from either variable.
function integrationKey(v: V): string | null {
  const key = secretValue(
    v.ORCH_INTEGRATION_ENCRYPTION_KEY,
    v.ORCH_INTEGRATION_ENCRYPTION_KEY_FILE,
    'ORCH_INTEGRATION_ENCRYPTION_KEY_FILE',
  ).value;
  if (key !== null && !/^[0-9a-fA-F]{64}$/.test(key)) {
    throw problem(
      'ORCH_INTEGRATION_ENCRYPTION_KEY',
      `expected exactly 64 hex characters (32 bytes), got ${key.length} characters`,
    );
  }
  return key;
}
