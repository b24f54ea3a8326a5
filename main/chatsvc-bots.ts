// The chat-service bot sockets of a process (the orchestration service's): the connector runs them,
// and the supervisor's processor (api/orchestration/chatsvc/reactor.ts, in every instance) drives
// them, registered here, once, with the platform's processor engine. `serve` starts it with the
// orchestration service.

import { botSupervisorProcessor } from '../api/orchestration/chatsvc/reactor.ts';
import { chatsvcConnector } from './apps.ts';
import type { Platform } from './platform.ts';

/** How long starting waits for the first pass (a failing or slow one does not hold the start up: the engine retries it). */
const FIRST_PASS_WAIT_MS = 10_000;

export interface ChatsvcBots {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function chatsvcBots(p: Platform): ChatsvcBots {
  const connector = chatsvcConnector(p);
  const processor = botSupervisorProcessor(connector.supervisor, p.config.chatsvc.supervisorSecs);
  return {
    /** The sockets run from now; resolves once the first pass is made (bounded). */
    async start() {
      await connector.start();
      p.engine.register([processor]);
      p.engine.start([processor.name]);
      let timer: NodeJS.Timeout | undefined;
      const live = p.engine.whenLive(processor.name).catch(() => {}); // the engine logged the failure
      await Promise.race([live, new Promise((r) => (timer = setTimeout(r, FIRST_PASS_WAIT_MS)))]);
      clearTimeout(timer);
    },
    async stop() {
      await p.engine.unregister([processor.name]); // a service started again in this process registers its own
      await connector.stop();
    },
  };
}
