// The web-push sender: a reactor (infra/processors/reactor.ts: one process at a time, the
// checkpoint moved after each batch, so a restart resumes where it stopped) that pushes to users
// with no socket on any instance (api/chat/ws/presence.ts) and a push subscription:
//
// - `MeetingReminderFired`: to each of `recipient_ids`: `{type: "meeting_reminder", meeting_id,
//   occurrence_id, channel_id, title, start, offset_minutes}`, `TTL` the seconds left until the
//   start (none left: not sent), `Topic` from the reminder id (a resend replaces the first),
//   urgency high;
// - `MessagePosted` with `mentions`: to each mentioned user but the sender: `{type: "mention",
//   channel_id, channel_name, sender_id, sender_name}` (never the message or its ciphertext),
//   TTL a day, `Topic` per channel (an offline user's pending mentions of one channel collapse
//   into the latest), urgency normal.
//
// The payload is encrypted to the subscription's keys (aes128gcm): the push service cannot read
// it. A 404 or 410 from the push service drops the subscription (`PushSubscriptionRemoved`,
// reason `gone`); other failures are logged (the subscription id and status or code, never the
// endpoint) and not retried: a notification is best effort, and a retry of the page would
// repeat the ones that went through. A newly started sender begins at the log's head: history
// is never pushed.
//
// Idempotent by event id as far as a push can be: a batch handed over again (a crash after the
// sends, before the checkpoint) sends each notification again with the same `Topic` (derived from
// the reminder id, or the channel), so the push service replaces one still pending instead of
// queueing a second; one the device already showed is shown again, which is why a sent push is
// never retried on failure. Dropping a gone subscription is a command on its own stream that
// decides nothing the second time (the subscription is removed already).

import type { MessageEvent } from '../../../domain/chat/messages/events.ts';
import type { ReminderEvent as MeetingReminderFiredEvent } from '../../../domain/chat/meetings/events.ts';
import { endpointSealContext, keysSealContext, pushSubscriptionDecider } from '../../../domain/chat/push/decider.ts';
import { pushSubscriptionStream } from '../../../domain/chat/streams.ts';
import { openSecret } from '../../../crypto/seal.ts';
import type { Clock } from '../../../infra/clock.ts';
import { asDomainEvent, type CommandContext, type CommandRunner } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { defineReactor, type Reactor } from '../../../infra/processors/reactor.ts';
import type { Logger } from '../../../infra/logging.ts';
import { OutboundError, type OutboundPolicy } from '../../../infra/outbound/guard.ts';
import { pushTopic, sendWebPush, type PushMessage, type Vapid } from '../../../infra/push/web-push.ts';
import { mapLimit } from '../../../infra/scheduler/scheduler.ts';
import { pushSubscriptionsFor, type PushSubscriptionRow } from '../../../projections/chat/push.ts';
import { usersWithSockets } from '../ws/presence.ts';

export const MENTION_TTL_SECONDS = 24 * 60 * 60;
const PUSH_ACTOR: CommandContext = { actor: { kind: 'system', id: 'push_sender' }, correlationId: null };

export interface PushSenderDeps {
  db: Pool;
  commands: CommandRunner;
  sealKey: Uint8Array;
  vapid: Vapid;
  policy: OutboundPolicy;
  clock: Clock;
  log: Logger;
}

type Posted = Extract<MessageEvent, { type: 'MessagePosted' }>['data'];

export function pushSender(deps: PushSenderDeps): Reactor {
  /** Send `message` to every subscription of `userIds` whose user has no socket anywhere. */
  async function deliver(userIds: string[], message: PushMessage, causationId: string): Promise<void> {
    const subscriptions = await pushSubscriptionsFor(deps.db, [...new Set(userIds)]);
    if (!subscriptions.length) return;
    const online = await usersWithSockets(deps.db, [...new Set(subscriptions.map((s) => s.user_id))]);
    await mapLimit(
      subscriptions.filter((s) => !online.has(s.user_id)),
      8,
      (s) => sendOne(s, message, causationId),
    );
  }

  async function sendOne(s: PushSubscriptionRow, message: PushMessage, causationId: string): Promise<void> {
    let status: number;
    try {
      const endpoint = openSecret(deps.sealKey, s.endpoint_sealed, endpointSealContext(s.id));
      const keys = JSON.parse(openSecret(deps.sealKey, s.keys_sealed, keysSealContext(s.id))) as {
        p256dh: string;
        auth: string;
      };
      status = await sendWebPush({ endpoint, keys }, message, deps.vapid, deps.policy);
    } catch (error) {
      const code = error instanceof OutboundError ? error.code : 'error';
      deps.log.warn('push_failed', {
        subscription_id: s.id,
        code,
        ...(code === 'error' ? { error: (error as Error).name } : {}),
      });
      return;
    }
    if (status === 404 || status === 410) {
      await deps.commands.run(
        pushSubscriptionStream(s.id),
        pushSubscriptionDecider,
        { type: 'Drop', subscription_id: s.id, status, at: deps.clock.now().toISOString() },
        { ...PUSH_ACTOR, causationId },
        { awaitProjections: false },
      );
      deps.log.info('push_subscription_gone', { subscription_id: s.id, status });
    } else if (status < 200 || status >= 300) {
      deps.log.warn('push_rejected', { subscription_id: s.id, status });
    }
  }

  async function reminder(event: RecordedEvent): Promise<void> {
    const d = asDomainEvent<MeetingReminderFiredEvent>(event).data;
    const ttl = Math.floor((Date.parse(d.start) - deps.clock.now().getTime()) / 1000);
    if (!(ttl > 0)) return; // the meeting has started: a reminder is no use now
    const payload = {
      type: 'meeting_reminder',
      meeting_id: d.meeting_id,
      occurrence_id: d.occurrence_id,
      channel_id: d.channel_id,
      title: d.title,
      start: d.start,
      offset_minutes: d.offset_minutes,
    };
    await deliver(
      d.recipient_ids,
      {
        payload: JSON.stringify(payload),
        ttlSeconds: ttl,
        topic: pushTopic(`reminder:${d.reminder_id}`),
        urgency: 'high',
      },
      event.id,
    );
  }

  async function mention(event: RecordedEvent): Promise<void> {
    const d = asDomainEvent<Extract<MessageEvent, { type: 'MessagePosted' }>>(event).data as Posted;
    const recipients = (d.mentions ?? []).filter((id) => id !== d.sender_id);
    if (!recipients.length) return;
    const { rows } = await deps.db.query<{ channel_name: string | null; sender_name: string | null }>(
      `SELECT (SELECT name FROM chat_channels WHERE id = $1) AS channel_name, (SELECT username FROM chat_users WHERE id = $2) AS sender_name`,
      [d.channel_id, d.sender_id],
    );
    const payload = {
      type: 'mention',
      channel_id: d.channel_id,
      channel_name: rows[0]?.channel_name ?? null,
      sender_id: d.sender_id,
      sender_name: d.webhook?.username ?? rows[0]?.sender_name ?? null,
    };
    await deliver(
      recipients,
      {
        payload: JSON.stringify(payload),
        ttlSeconds: MENTION_TTL_SECONDS,
        topic: pushTopic(`mention:${d.channel_id}`),
        urgency: 'normal',
      },
      event.id,
    );
  }

  return defineReactor<MessageEvent | MeetingReminderFiredEvent>({
    name: 'web_push_sender',
    handles: ['MeetingReminderFired', 'MessagePosted'],
    startAt: 'head',
    async react(events) {
      for (const event of events) {
        if (event.type === 'MeetingReminderFired') await reminder(event);
        else if (event.type === 'MessagePosted') await mention(event);
      }
    },
  });
}
