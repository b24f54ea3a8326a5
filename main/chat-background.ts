// The chat service's background work: the scheduler (scheduled messages, poll closings, meeting
// reminders) and the reactors that act on its events (the scheduled-message poster, the web-push
// sender). `serve`
// starts it with the chat service on every instance; tests build it unstarted and drive it.

import { pollCloseHandler, postDeliveries, scheduledMessageHandler } from '../api/chat/scheduled/fire.ts';
import { meetingReminderHandler } from '../api/chat/meetings/fire.ts';
import { pushSender, PUSH_SENDER_EVENTS } from '../api/chat/push/sender.ts';
import { Reactor } from '../infra/scheduler/reactor.ts';
import { chatVapidKeys } from './chat-secrets.ts';
import { Scheduler, type SchedulerOptions } from '../infra/scheduler/scheduler.ts';
import type { Platform } from './platform.ts';

export interface ChatBackground {
  scheduler: Scheduler;
  poster: Reactor;
  pusher: Reactor;
  start(): void;
  stop(): Promise<void>;
  /** Fire what is due and let every reactor act on it (tests). */
  settle(): Promise<void>;
}

export function chatBackground(p: Platform, options: Partial<Pick<SchedulerOptions, 'batch' | 'concurrency' | 'pollMs'>> = {}): ChatBackground {
  const fire = { db: p.pool, commands: p.commands, log: p.log };
  const scheduler = new Scheduler({
    pool: p.pool, clock: p.clock, log: p.log, ...options,
    handlers: { message: scheduledMessageHandler(fire), poll_close: pollCloseHandler(fire), meeting_reminder: meetingReminderHandler(fire) },
  });
  const poster = new Reactor({ name: 'scheduled_message_poster', eventTypes: ['ScheduledMessageDelivered'], store: p.store, pool: p.pool, log: p.log, handle: postDeliveries(fire) });
  const vapid = { subject: p.config.chat.push.subject, keys: chatVapidKeys(p.config.chat, p.sealKey) };
  const pusher = new Reactor({
    name: 'web_push_sender', eventTypes: PUSH_SENDER_EVENTS, store: p.store, pool: p.pool, log: p.log, startAt: 'head',
    handle: pushSender({ db: p.pool, commands: p.commands, sealKey: p.sealKey, vapid, policy: p.config.chat.outbound, clock: p.clock, log: p.log }),
  });
  const reactors = [poster, pusher];
  return {
    scheduler, poster, pusher,
    start() {
      scheduler.start();
      for (const r of reactors) r.start();
    },
    async stop() {
      await scheduler.stop();
      await Promise.all(reactors.map((r) => r.stop()));
    },
    async settle() {
      while ((await scheduler.tick()) > 0);
      for (const r of reactors) await r.drain();
    },
  };
}
