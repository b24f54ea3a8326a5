// What the chat routes may use (built by main/).

import type { ChatConfig } from '../../infra/config.ts';
import type { CommandRunner } from '../../infra/commands.ts';
import type { EventStore } from '../../infra/eventstore/port.ts';
import type { ServiceDeps } from '../shared/deps.ts';
import type { SessionLookup } from './session-cache.ts';
import type { BotTokenLookup } from './bot-cache.ts';
import type { ServiceUpdates } from '../shared/updates/commands.ts';
import type { FilesystemBlobStore } from '../../infra/files/store.ts';
import type { Vapid } from '../../infra/push/web-push.ts';

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
  /** Bot tokens behind X-Bot-Token (cached while this process runs their projections). */
  bots: BotTokenLookup;
  /** This service's update checker and sidecar client. */
  updates: ServiceUpdates;
  /** Uploaded bytes: content-addressed blobs (CHATSVC_FILES_DIR). */
  files: FilesystemBlobStore;
  /** Web push: the VAPID key pair (made once, sealed under DATA_DIR) and subject. */
  vapid: Vapid;
}
