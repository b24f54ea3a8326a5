// The platform's own variables: storage, logging, the keys every service shares.

import path from 'node:path';
import { custom, derived, type EnvVars, positiveInt, secretValue, text, type Values } from './kinds.ts';

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const platformVars = {
  DATABASE_URL: text({
    description:
      'PostgreSQL for read models and (without EVENTSTORE_URL) the log; unset: an embedded server under DATA_DIR. May carry a password',
    secret: true,
  }),
  DATABASE_POOL_SIZE: positiveInt({
    description: 'PostgreSQL connections one process opens at most; lower it when many processes share one server',
    default: 40,
  }),
  EVENTSTORE_URL: text({
    description:
      'EventStoreDB connection string (`esdb://host:2113?tls=false`); the log moves there. May carry a password',
    secret: true,
  }),
  DATA_DIR: text({ description: 'where the embedded PostgreSQL and generated secrets live', default: './data' }),
  // Lenient on purpose: a mistyped level logs at info rather than refusing the start.
  LOG_LEVEL: custom(
    { description: 'debug, info, warn or error (anything else: info)', default: 'info' },
    (value): LogLevel => {
      const level = (value ?? '').trim().toLowerCase() as LogLevel;
      return LOG_LEVELS.includes(level) ? level : 'info';
    },
  ),
  NODE_ENV: text({
    description: '`test` admits the test-only switches (CHATSVC_OUTBOUND_ALLOW_LOOPBACK); nothing else reads it',
  }),
  REDIS_URL: text({
    description:
      'Redis for the shared rate limiter (`redis://host:6379`); unset: counters live in each process. May carry a password',
    secret: true,
  }),
  ORCH_SECRET_KEY: text({
    description: '64 hex characters: the key sealing secrets at rest; unset: generated under DATA_DIR',
    secret: true,
  }),
  ORCH_SECRET_KEY_FILE: derived({
    description:
      'file holding ORCH_SECRET_KEY (a named file must exist); unset: the key generated at the first start is kept at the default path',
    default: 'DATA_DIR/secret.key',
    secret: true,
  }),
  ORCH_AUDIT_SIGNING_KEY_FILE: derived({
    description:
      "file holding the Ed25519 seed (64 hex characters) that signs the log's checkpoints; unset: generated once (mode 0600). A named file that does not exist is a startup error, never a new key",
    default: 'DATA_DIR/audit-signing.key',
    secret: true,
  }),
} satisfies EnvVars;

export interface PlatformConfig {
  databaseUrl: string | null;
  /** Connections the platform's pool opens at most (its log listener is one more). */
  databasePoolSize: number;
  eventStoreUrl: string | null;
  dataDir: string;
  logLevel: LogLevel;
  redisUrl: string | null;
  secretKeyHex: string | null;
  secretKeyFile: string;
  /** The audit signing key's file, and whether ORCH_AUDIT_SIGNING_KEY_FILE named it (then it must exist). */
  auditSigningKeyFile: string;
  auditSigningKeyConfigured: boolean;
}

export function platformConfig(v: Values<typeof platformVars>): PlatformConfig {
  const dataDir = path.resolve(v.DATA_DIR);
  return {
    databaseUrl: v.DATABASE_URL,
    databasePoolSize: v.DATABASE_POOL_SIZE,
    eventStoreUrl: v.EVENTSTORE_URL,
    dataDir,
    logLevel: v.LOG_LEVEL,
    redisUrl: v.REDIS_URL,
    secretKeyHex: secretValue(v.ORCH_SECRET_KEY, v.ORCH_SECRET_KEY_FILE, 'ORCH_SECRET_KEY_FILE').value,
    secretKeyFile: v.ORCH_SECRET_KEY_FILE ?? path.join(dataDir, 'secret.key'),
    auditSigningKeyFile: path.resolve(v.ORCH_AUDIT_SIGNING_KEY_FILE ?? path.join(dataDir, 'audit-signing.key')),
    auditSigningKeyConfigured: v.ORCH_AUDIT_SIGNING_KEY_FILE !== null,
  };
}
