// Updates: both services' release channels and manifest hosts, and the updater sidecar that
// applies signed releases (`orchard serve sidecar`).

import path from 'node:path';
import { CHANNELS } from '../../domain/updates/manifest.ts';
import { parseCheckInterval, type CheckSchedule } from '../../domain/updates/schedule.ts';
import {
  baseUrl,
  custom,
  derived,
  type EnvVars,
  listen,
  type ListenAddress,
  oneOf,
  positiveInt,
  text,
  type Values,
  wholeNumber,
} from './kinds.ts';

export const updatesVars = {
  ORCH_UPDATES_CHECK_INTERVAL_SECS: custom(
    {
      description:
        'seconds between update checks, plus 0-10%; under 900 raised to 900; `off` or `0`: no background check. Both services',
      default: '21600',
    },
    parseCheckInterval,
  ),
  ORCH_UPDATER_CHANNEL: oneOf(CHANNELS, {
    description: 'orchestration release channel: canary, beta or stable',
    default: 'stable',
  }),
  ORCH_UPDATE_MANIFEST_HOST: baseUrl({
    description: 'orchestration manifest host (serves `/channels/<channel>.json`); unset: no update checks',
  }),
  UPDATE_CHANNEL: oneOf(CHANNELS, { description: 'chat release channel: canary, beta or stable', default: 'stable' }),
  UPDATE_MANIFEST_HOST: baseUrl({ description: 'chat manifest host; unset: no update checks' }),
  ORCH_UPDATER_PUBLIC_KEY_FILE: text({
    description: 'file holding the release public key (64 hex) that replaces the pinned one',
  }),
  ORCH_UPDATER_URL: baseUrl({
    description: 'where the orchestration service reaches the sidecar',
    default: 'http:// + ORCH_UPDATER_LISTEN',
  }),
  ORCH_UPDATER_API_TOKEN_FILE: text({
    description:
      'file holding the sidecar HMAC token (at least 32 bytes), for the sidecar and the orchestration service',
    secret: true,
  }),
  ORCH_UPDATER_DELIVERY_CHECK_SECS: wholeNumber({
    description: 'seconds between delivery sweeps (`GET /v1/delivery`) of the orchestration service (0: off)',
    default: 3600,
  }),
  UPDATER_API_URL: baseUrl({
    description: 'where the chat service reaches the sidecar',
    default: 'http:// + ORCH_UPDATER_LISTEN',
  }),
  UPDATER_API_TOKEN_FILE: text({
    description: 'file holding the sidecar HMAC token for the chat service',
    default: '/run/secrets/updater_token',
    secret: true,
  }),
  ORCH_UPDATER_LISTEN: listen({ description: 'the updater sidecar listen address', default: '127.0.0.1:8686' }),
  ORCH_UPDATER_DATA_DIR: derived({
    description: 'the sidecar journal, snapshots and downloads',
    default: 'DATA_DIR/updater',
  }),
  ORCH_UPDATER_RUNTIME: oneOf(['docker', 'process'], {
    description: 'how the sidecar swaps releases: `docker` or `process`',
    default: 'docker',
  }),
  ORCH_UPDATER_RELEASES_DIR: derived({
    description: 'process runtime: unpacked releases by version and the `current` symlink',
    default: 'ORCH_UPDATER_DATA_DIR/releases',
  }),
  ORCH_UPDATER_PG_BINDIR: text({ description: 'process runtime: directory of pg_dump and psql; unset: found on PATH' }),
  ORCH_UPDATER_COMPOSE_PATH: text({
    description: 'docker runtime: the compose file of the stack (relative to the working directory)',
    default: 'compose.yaml',
  }),
  ORCHARD_IMAGE: text({
    description:
      'docker runtime: the image running now, until the sidecar has recorded one (compose.yaml interpolates it too)',
    default: 'orchard:local',
  }),
  ORCH_UPDATER_DRAIN_SECS: wholeNumber({
    description: 'seconds a drained service gets after SIGTERM before it is killed',
    default: 30,
  }),
  ORCH_UPDATER_HEALTH_GRACE_SECS: positiveInt({
    description: 'seconds a new release gets to answer healthy',
    default: 120,
  }),
  ORCH_UPDATER_FAILPOINTS: text({
    description:
      'test faults, `<state>=error|crash` comma-separated; honoured only with `serve sidecar --enable-failpoints`',
    default: '',
  }),
} satisfies EnvVars;

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
  /** ORCHARD_IMAGE: the image running now, when the sidecar has not recorded one yet. */
  initialImage: string;
  drainSecs: number;
  healthGraceSecs: number;
  failpoints: string;
}

export function updatesConfig(
  v: Values<typeof updatesVars>,
  dataDir: string,
): { updates: UpdatesConfig; updater: UpdaterConfig } {
  const listen = v.ORCH_UPDATER_LISTEN;
  const listenUrl = `http://${listen.host.includes(':') ? `[${listen.host}]` : listen.host}:${listen.port}`;
  const updaterDir = path.resolve(v.ORCH_UPDATER_DATA_DIR ?? path.join(dataDir, 'updater'));
  const orchToken = v.ORCH_UPDATER_API_TOKEN_FILE;
  return {
    updates: {
      orch: {
        channel: v.ORCH_UPDATER_CHANNEL,
        host: v.ORCH_UPDATE_MANIFEST_HOST,
        sidecarUrl: v.ORCH_UPDATER_URL ?? listenUrl,
        tokenFile: orchToken,
      },
      chat: {
        channel: v.UPDATE_CHANNEL,
        host: v.UPDATE_MANIFEST_HOST,
        sidecarUrl: v.UPDATER_API_URL ?? listenUrl,
        tokenFile: v.UPDATER_API_TOKEN_FILE,
      },
      schedule: v.ORCH_UPDATES_CHECK_INTERVAL_SECS,
      publicKeyFile: v.ORCH_UPDATER_PUBLIC_KEY_FILE,
      deliveryCheckSecs: v.ORCH_UPDATER_DELIVERY_CHECK_SECS,
    },
    updater: {
      listen,
      dataDir: updaterDir,
      tokenFile: orchToken,
      runtime: v.ORCH_UPDATER_RUNTIME,
      releasesDir: path.resolve(v.ORCH_UPDATER_RELEASES_DIR ?? path.join(updaterDir, 'releases')),
      pgBinDir: v.ORCH_UPDATER_PG_BINDIR,
      composeFile: path.resolve(v.ORCH_UPDATER_COMPOSE_PATH),
      initialImage: v.ORCHARD_IMAGE,
      drainSecs: v.ORCH_UPDATER_DRAIN_SECS,
      healthGraceSecs: v.ORCH_UPDATER_HEALTH_GRACE_SECS,
      failpoints: v.ORCH_UPDATER_FAILPOINTS,
    },
  };
}
