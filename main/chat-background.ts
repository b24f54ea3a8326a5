// The chat service's background work: the scheduler (scheduled messages, poll closings, meeting
// reminders) and the reactors that act on its events (the scheduled-message poster, the web-push
// sender), registered here, once, with the platform's processor engine. `serve` starts it with
// the chat service on every instance (the engine runs each reactor on one of them); tests build
// it unstarted and drive it.

import { pollCloseHandler, scheduledMessageHandler } from '../api/chat/scheduled/fire.ts';
import { scheduledMessagePoster } from '../api/chat/scheduled/reactor.ts';
import { meetingReminderHandler } from '../api/chat/meetings/fire.ts';
import { pushSender } from '../api/chat/push/reactor.ts';
import { chatVapidKeys } from './chat-secrets.ts';
import { Scheduler, type SchedulerOptions } from '../infra/scheduler/scheduler.ts';
import type { Platform } from './platform.ts';

export interface DrivenReactor {
  name: string;
  drain(): Promise<number>;
}

export interface ChatBackground {
  scheduler: Scheduler;
  /** The chat reactors, by the names registered with `platform.engine`; `drain` drives one unstarted (tests). */
  poster: DrivenReactor;
  pusher: DrivenReactor;
  start(): void;
  stop(): Promise<void>;
  /** Fire what is due and let every reactor act on it (tests). */
  settle(): Promise<void>;
}

export function chatBackground(
  p: Platform,
  options: Partial<Pick<SchedulerOptions, 'batch' | 'concurrency' | 'pollMs'>> = {},
): ChatBackground {
  const fire = { db: p.pool, commands: p.commands, log: p.log };
  const scheduler = new Scheduler({
    pool: p.pool,
    clock: p.clock,
    log: p.log,
    ...options,
    handlers: {
      message: scheduledMessageHandler(fire),
      poll_close: pollCloseHandler(fire),
      meeting_reminder: meetingReminderHandler(fire),
    },
  });
  const vapid = { subject: p.config.chat.push.subject, keys: chatVapidKeys(p.config.chat, p.sealKey) };
  const poster = scheduledMessagePoster(fire);
  const pusher = pushSender({
    db: p.pool,
    commands: p.commands,
    sealKey: p.sealKey,
    vapid,
    policy: p.config.chat.outbound,
    clock: p.clock,
    log: p.log,
  });
  p.engine.register([poster, pusher]);
  const names = [poster.name, pusher.name];
  const driven = (name: string): DrivenReactor => ({ name, drain: () => p.engine.drain(name) });
  return {
    scheduler,
    poster: driven(poster.name),
    pusher: driven(pusher.name),
    start() {
      scheduler.start();
      p.engine.start(names);
    },
    async stop() {
      await scheduler.stop();
      await p.engine.unregister(names); // a chat service started again in this process registers its own
    },
    async settle() {
      while ((await scheduler.tick()) > 0);
      for (const name of names) await p.engine.drain(name);
    },
  };
}
