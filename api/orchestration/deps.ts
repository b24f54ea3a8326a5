// What the orchestration routes may use: a narrow object, not the whole platform. The
// composition root (main/) builds it; tests build it with their own clock.

import type { Config } from '../../infra/config.ts';
import type { Clock } from '../../infra/clock.ts';
import type { CommandRunner } from '../../infra/commands.ts';
import type { Pool } from '../../infra/db/pool.ts';
import type { ChainStore } from '../../infra/audit/chain-store.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import type { Models } from '../../infra/llm/index.ts';
import type { Logger } from '../../infra/logging.ts';
import type { Metrics } from '../../infra/metrics.ts';
import type { RateLimiter } from '../../infra/rate-limit/index.ts';
import type { PrincipalLookup } from './auth/principal-cache.ts';
import type { ProfileLookup } from './profiles/profile-cache.ts';
import type { MaintenanceView } from '../../infra/updates/write-gate.ts';
import type { ServiceUpdates } from '../shared/updates/commands.ts';
import type { ChatsvcConnector } from './chatsvc/connector.ts';

export interface OrchDeps {
  commands: CommandRunner;
  db: Pool;
  /** Seals secrets that must be shown again (API keys on /me). */
  sealKey: Uint8Array;
  clock: Clock;
  config: Config;
  log: Logger;
  limiter: RateLimiter;
  metrics: Metrics;
  /** Accounts behind key and session hashes (cached while this process runs their projections). */
  principals: PrincipalLookup;
  /** Profiles by slug for the chat surfaces (cached while this process runs the `profiles` projection). */
  profiles: ProfileLookup;
  /** The log, read-only: the auditors' routes and the /ws feed (writes go through `commands`). */
  events: Pick<EventStore, 'readAll' | 'readStream' | 'subscribe' | 'headPosition' | 'countAfter'>;
  /** The log's hash chain and the public key its checkpoints are signed with (event proofs). */
  audit: { chain: ChainStore; publicKeyHex: string };
  /** Model calls (ORCH_LLM_PROVIDER, the local model, prices). */
  models: Models;
  version: string;
  maintenance: () => MaintenanceView;
  /** This service's update checker and sidecar client. */
  updates: ServiceUpdates;
  /** The chat-service connector: integrations, tools and the bot sockets (one per process). */
  chatsvc: ChatsvcConnector;
  /** The web console's build (default web/console/dist under the install's root). */
  consoleDist?: string;
}

/** What the account use cases need. */
export type AccountDeps = Pick<OrchDeps, 'commands' | 'db' | 'sealKey' | 'clock'>;
