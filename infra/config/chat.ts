// The chat service: its address, sign-up and rate rules, secrets, uploads, outbound fetches,
// GIFs, web push, and where feedback is mirrored.

import path from 'node:path';
import {
  baseUrl,
  derived,
  type EnvVars,
  list,
  listen,
  offUnlessOn,
  oneOf,
  positiveInt,
  problem,
  secretValue,
  text,
  type Values,
} from './kinds.ts';

export const chatVars = {
  CHATSVC_LISTEN: listen({ description: 'chat service listen address', default: '127.0.0.1:8600' }),
  CHATSVC_PUBLIC_URL: text({
    description: "the chat service's public base URL, shown by `GET /api/auth/config`",
    default: '',
  }),
  CHATSVC_REGISTRATION: oneOf(['open', 'invite', 'closed'], {
    description: 'chat registration: `open`, `invite` (needs an admin-minted `invite_code`) or `closed`',
    default: 'open',
  }),
  CHATSVC_COMMUNITY_CREATION: oneOf(['admin', 'open'], {
    description: 'who creates communities: `admin` (instance admins and the owner) or `open` (any user)',
    default: 'admin',
  }),
  CHATSVC_JWT_SECRET: text({
    description:
      'HS256 key of chat access tokens; unset: 32 random bytes generated once, sealed under `DATA_DIR/chat-jwt.sealed`',
    secret: true,
  }),
  CHATSVC_JWT_SECRET_FILE: text({ description: 'file holding CHATSVC_JWT_SECRET', secret: true }),
  CHATSVC_AUTH_RATE_PER_MIN: positiveInt({
    description: 'requests a minute per client address on the chat auth POST routes',
    default: 10,
  }),
  CHATSVC_API_RATE_PER_SEC: positiveInt({
    description: 'sustained chat API requests per second per user; the burst is twice this',
    default: 20,
  }),
  CHATSVC_TURN_URLS: list({
    description: 'comma-separated TURN/STUN URIs handed out by `/api/account/turn-credentials`',
  }),
  CHATSVC_TURN_SECRET: text({
    description:
      'shared secret of the TURN server (TURN REST credentials); without it (or without URLs) that route answers 503',
    secret: true,
  }),
  CHATSVC_BOOTSTRAP_SECRET: text({
    description:
      'deploy secret of `POST /api/admin/bots/bootstrap-token` (header `X-Provision-Bootstrap-Secret`); unset: that route answers 404',
    secret: true,
  }),
  CHATSVC_BOOTSTRAP_SECRET_FILE: text({ description: 'file holding CHATSVC_BOOTSTRAP_SECRET', secret: true }),
  FEEDBACK_TRACKER_BASE_URL: baseUrl({
    description:
      'issue tracker speaking the GitHub issues API (`https://api.github.com`, or a GHE `/api/v3`); feedback is mirrored only when this, FEEDBACK_TRACKER_REPO and FEEDBACK_TRACKER_TOKEN are all set',
  }),
  FEEDBACK_TRACKER_REPO: text({ description: '`owner/name` of the repository feedback issues are opened in' }),
  FEEDBACK_TRACKER_TOKEN: text({
    description: 'token for the feedback tracker (sent as `Authorization: Bearer`)',
    secret: true,
  }),
  CHATSVC_FILES_DIR: derived({
    description: 'where uploaded files live: content-addressed blobs, temp files, link-preview images',
    default: 'DATA_DIR/files',
  }),
  CHATSVC_MAX_UPLOAD_MB: positiveInt({
    description: 'largest uploaded file in MiB (413 `file_too_large`); the request body may be 10 MiB more',
    default: 100,
  }),
  CHATSVC_UPLOAD_QUOTA_MB: positiveInt({
    description: 'stored uploads per user in MiB (413 `quota_exceeded`)',
    default: 500,
  }),
  CHATSVC_OUTBOUND_ALLOW_LOOPBACK: offUnlessOn({
    description:
      'test only: link previews and push endpoints may reach 127.0.0.0/8 and ::1 on any port; without NODE_ENV=test the process refuses to start',
  }),
  CHATSVC_DNS_SERVERS: list({
    description:
      'comma-separated DNS servers (`ip` or `ip:port`) for outbound fetches such as link previews; unset: the system resolver',
  }),
  CHATSVC_GIF_PROVIDER_URL: baseUrl({
    description:
      'base URL of a GIPHY- or Tenor-speaking API (`https://api.giphy.com`, `https://tenor.googleapis.com`); unset: the GIF routes answer 503 `feature_disabled`',
  }),
  CHATSVC_GIF_PROVIDER_KEY: text({
    description: 'API key of the GIF provider (sent upstream only, never logged)',
    default: '',
    secret: true,
  }),
  CHATSVC_GIF_PROVIDER_API: oneOf(['giphy', 'tenor'], {
    description: 'the GIF provider protocol: `giphy` or `tenor`',
    default: 'giphy',
  }),
  CHATSVC_VAPID_PRIVATE_KEY: text({
    description:
      'web push VAPID private key, 32 bytes base64url (the public key is derived); unset: made once and sealed under DATA_DIR. Instances on separate data directories must share it',
    secret: true,
  }),
  CHATSVC_VAPID_PRIVATE_KEY_FILE: text({ description: 'file holding CHATSVC_VAPID_PRIVATE_KEY', secret: true }),
  CHATSVC_VAPID_SUBJECT: derived({
    description: 'the contact web push services see in the VAPID token: a mailto: or https: URL',
    default: 'CHATSVC_PUBLIC_URL when https, else mailto:webpush@orchard.invalid',
  }),
} satisfies EnvVars;

type V = Values<typeof chatVars>;

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

const MIB = 1024 * 1024;

export function chatConfig(v: V, platform: { dataDir: string; nodeEnv: string | null }): ChatConfig {
  const { dataDir } = platform;
  if (v.CHATSVC_OUTBOUND_ALLOW_LOOPBACK && platform.nodeEnv !== 'test') {
    throw problem('CHATSVC_OUTBOUND_ALLOW_LOOPBACK', 'is for tests only: it needs NODE_ENV=test');
  }
  const tracker = {
    baseUrl: v.FEEDBACK_TRACKER_BASE_URL,
    repo: v.FEEDBACK_TRACKER_REPO,
    token: v.FEEDBACK_TRACKER_TOKEN,
  };
  return {
    registration: v.CHATSVC_REGISTRATION,
    publicUrl: v.CHATSVC_PUBLIC_URL,
    jwtSecret: secretValue(v.CHATSVC_JWT_SECRET, v.CHATSVC_JWT_SECRET_FILE, 'CHATSVC_JWT_SECRET_FILE').value,
    jwtSecretFile: path.join(dataDir, 'chat-jwt.sealed'),
    authRatePerMin: v.CHATSVC_AUTH_RATE_PER_MIN,
    apiRatePerSec: v.CHATSVC_API_RATE_PER_SEC,
    turnUrls: v.CHATSVC_TURN_URLS,
    turnSecret: v.CHATSVC_TURN_SECRET,
    communityCreation: v.CHATSVC_COMMUNITY_CREATION,
    bootstrapSecret: secretValue(
      v.CHATSVC_BOOTSTRAP_SECRET,
      v.CHATSVC_BOOTSTRAP_SECRET_FILE,
      'CHATSVC_BOOTSTRAP_SECRET_FILE',
    ).value,
    feedbackTracker:
      tracker.baseUrl && tracker.repo && tracker.token
        ? { baseUrl: tracker.baseUrl, repo: tracker.repo, token: tracker.token }
        : null,
    files: {
      dir: path.resolve(v.CHATSVC_FILES_DIR ?? path.join(dataDir, 'files')),
      maxUploadBytes: v.CHATSVC_MAX_UPLOAD_MB * MIB,
      quotaBytes: v.CHATSVC_UPLOAD_QUOTA_MB * MIB,
    },
    outbound: { allowLoopback: v.CHATSVC_OUTBOUND_ALLOW_LOOPBACK, dnsServers: v.CHATSVC_DNS_SERVERS },
    gifs: v.CHATSVC_GIF_PROVIDER_URL
      ? { url: v.CHATSVC_GIF_PROVIDER_URL, key: v.CHATSVC_GIF_PROVIDER_KEY, api: v.CHATSVC_GIF_PROVIDER_API }
      : null,
    push: chatPush(v, dataDir),
  };
}

// The subject's default comes from CHATSVC_PUBLIC_URL, and the key may come from a file: both
// are checked here, once the variables are known.
function chatPush(v: V, dataDir: string): ChatPushConfig {
  const subject =
    v.CHATSVC_VAPID_SUBJECT ??
    (/^https:\/\//i.test(v.CHATSVC_PUBLIC_URL) ? v.CHATSVC_PUBLIC_URL : 'mailto:webpush@orchard.invalid');
  if (!/^(mailto:\S+@\S+|https:\/\/\S+)$/i.test(subject)) {
    throw problem('CHATSVC_VAPID_SUBJECT', `expected a mailto: or https: URL, got ${JSON.stringify(subject)}`);
  }
  const vapidPrivateKey = secretValue(
    v.CHATSVC_VAPID_PRIVATE_KEY,
    v.CHATSVC_VAPID_PRIVATE_KEY_FILE,
    'CHATSVC_VAPID_PRIVATE_KEY_FILE',
  ).value;
  if (vapidPrivateKey && Buffer.from(vapidPrivateKey, 'base64url').length !== 32) {
    throw problem('CHATSVC_VAPID_PRIVATE_KEY', 'expected 32 bytes, base64url');
  }
  return { vapidPrivateKey, vapidFile: path.join(dataDir, 'chat-vapid.sealed'), subject };
}
