// What the chat routes may use (built by main/).

import type { ChatConfig } from '../../infra/config.ts';
import type { CommandRunner } from '../../infra/commands.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import type { ServiceDeps } from '../shared/deps.ts';
import type { SessionLookup } from './session-cache.ts';

export interface ChatDeps extends ServiceDeps {
  startedAt: Date;
  commands: CommandRunner;
  /** Seals secrets kept at rest (TOTP secrets). */
  sealKey: Uint8Array;
  config: ChatConfig;
  /** The HS256 key of access tokens. */
  jwtSecret: string;
  /** The log, for live delivery: sockets hear of events from a subscription, never from a handler. */
  events: Pick<EventStore, 'subscribe' | 'headPosition'>;
  /** Live sessions behind access tokens (cached while this process runs their projections). */
  sessions: SessionLookup;
}
