// Live delivery to this instance's sockets, from a subscription to the log (never from a
// request handler), so every instance delivers every event to the sockets it holds, whichever
// instance appended it:
//
// - `PrekeyConsumed` leaving fewer than 25 one-time prekeys: `KeysLow { remaining }` to the
//   owner's sockets;
// - `SessionRevoked`: that session's sockets close (4401);
// - `AccountDeleted`, `UserSuspended`: the account's sockets close (4401);
// - `BotTokenRevoked`: the sockets authenticated with that token close (4401);
// - channel subscriptions (`Subscribe { channel_id }`): `MessageCreated`, `MessageEdited`,
//   `MessageDeleted`, `SenderKeyUpdated`, `MemberJoined`, `MemberLeft` and
//   `SenderKeyRotationRequired` to the channel's subscribers, `Mentioned` to the sockets of a
//   mentioned member, `Typing` relayed between subscribers (not stored, this instance only);
// - `ChannelJoined { channel_id, scope }` to the sockets of a member who joined a channel or was
//   made a member at its creation (a DM, a standalone channel), subscribed or not, so a client
//   (the orchestration bot) can subscribe to channels joined while it is connected;
// - `MeetingReminderFired`: `MeetingReminder` to the sockets of each of its `recipient_ids`.
//
// Membership is checked at subscribe (the route, against the read model) and again on every
// forwarded event: the hub follows the channel's joins and removals in the same log order as
// its messages, so after a kick, leave or ban the subscription is dropped before the next
// event is forwarded, and a subscribe racing the removal is refused; joining again clears it.
//
// Presence (./presence.ts): the hub tells it when a user's first socket here joins and when the
// last one leaves, so other instances' push senders know the user is reachable live.
//
// The subscription runs while at least one socket is authenticated here, starting from the head
// of the log as it was when the first socket joined; `join` resolves once it is in place, so a
// client told `Authenticated` hears of everything appended afterwards.

import { LiveTail } from '../../../infra/eventstore/live-tail.ts';
import type { EventStore, RecordedEvent } from '../../../infra/eventstore/port.ts';
import type { Logger } from '../../../infra/logging.ts';
import { LOW_PREKEY_THRESHOLD } from '../../../domain/chat/keys/decider.ts';
import { pollFrame } from '../polls/frames.ts';
import type { Presence } from './presence.ts';

export interface HubSocket {
  user_id: string;
  session_id: string;
  send(frame: Record<string, unknown>): void;
  close(code: number, reason: string): void;
}

/** Channels one socket may follow at once. */
export const SUBSCRIPTIONS_PER_SOCKET = 500;

const DELIVERED = [
  'PrekeyConsumed',
  'SessionRevoked',
  'AccountDeleted',
  'UserSuspended',
  'BotTokenRevoked',
  'MessagePosted',
  'MessageEdited',
  'MessageDeleted',
  'SenderKeyDistributed',
  'ChannelMemberJoined',
  'ChannelMemberDeparted',
  'ChannelDeleted',
  'PollCreated',
  'PollVoted',
  'PollClosed',
  'ChannelCreated',
  'MeetingReminderFired',
];

type Data = Record<string, any>;

export class SocketHub {
  private readonly byUser = new Map<string, Set<HubSocket>>();
  private readonly byChannel = new Map<string, Set<HubSocket>>();
  private readonly channelsOf = new Map<HubSocket, Set<string>>();
  /** `<channel>:<user>` removed since the subscription started (and not joined again). */
  private readonly removed = new Set<string>();
  private size = 0;
  private readonly tail: LiveTail;

  constructor(
    events: Pick<EventStore, 'subscribe' | 'headPosition'>,
    private readonly log: Logger,
    /** Opens a stored sender-key distribution for delivery (it is sealed at rest). */
    private readonly openDistribution: (channelId: string, userId: string, sealed: string) => unknown,
    private readonly presence: Presence | null = null,
  ) {
    this.tail = new LiveTail(
      events,
      {
        deliver: (event) => this.deliverSafely(event),
        failed: (error) => this.interrupted(error),
        idle: () => this.size === 0,
      },
      { eventTypes: DELIVERED },
    );
  }

  get connections(): number {
    return this.size;
  }

  async join(socket: HubSocket): Promise<void> {
    let set = this.byUser.get(socket.user_id);
    const first = !set;
    if (!set) this.byUser.set(socket.user_id, (set = new Set()));
    if (!set.has(socket)) {
      set.add(socket);
      this.size += 1;
    }
    if (first) await this.presence?.connected(socket.user_id);
    await this.tail.start();
  }

  leave(socket: HubSocket): void {
    const set = this.byUser.get(socket.user_id);
    if (!set?.delete(socket)) return;
    for (const channelId of this.channelsOf.get(socket) ?? []) this.unsubscribe(socket, channelId);
    this.channelsOf.delete(socket);
    this.size -= 1;
    if (set.size === 0) {
      this.byUser.delete(socket.user_id);
      this.presence?.disconnected(socket.user_id);
    }
    if (this.size === 0) void this.stop();
  }

  /**
   * Follow a channel whose membership the caller has just checked. Refused (false) when the hub
   * has seen the member removed since; 'full' past the per-socket limit.
   */
  subscribe(socket: HubSocket, channelId: string): true | false | 'full' {
    if (this.removed.has(`${channelId}:${socket.user_id}`)) return false;
    let mine = this.channelsOf.get(socket);
    if (!mine) this.channelsOf.set(socket, (mine = new Set()));
    if (!mine.has(channelId) && mine.size >= SUBSCRIPTIONS_PER_SOCKET) return 'full';
    mine.add(channelId);
    let set = this.byChannel.get(channelId);
    if (!set) this.byChannel.set(channelId, (set = new Set()));
    set.add(socket);
    return true;
  }

  unsubscribe(socket: HubSocket, channelId: string): boolean {
    const set = this.byChannel.get(channelId);
    const had = set?.delete(socket) ?? false;
    if (set && set.size === 0) this.byChannel.delete(channelId);
    this.channelsOf.get(socket)?.delete(channelId);
    return had;
  }

  isSubscribed(socket: HubSocket, channelId: string): boolean {
    return this.byChannel.get(channelId)?.has(socket) ?? false;
  }

  /** A client's Typing frame, relayed to the channel's other subscribers. */
  typing(socket: HubSocket, channelId: string): void {
    for (const s of this.byChannel.get(channelId) ?? [])
      if (s !== socket) s.send({ type: 'Typing', channel_id: channelId, user_id: socket.user_id });
  }

  private async stop(): Promise<void> {
    if (await this.tail.stopIfIdle()) this.removed.clear();
  }

  /** One event from the log: a failure to deliver it is logged and the next one goes on. */
  private deliverSafely(event: RecordedEvent): void {
    try {
      this.deliver(event);
    } catch (error) {
      this.log.error('chat_ws_delivery_failed', { type: event.type, error: (error as Error).message });
    }
  }

  private interrupted(error: Error): void {
    this.log.error('chat_ws_subscription_failed', { error: error.message });
    // Sockets would otherwise hear nothing more: close them, clients reconnect.
    for (const set of this.byUser.values()) for (const socket of set) socket.close(1011, 'live delivery interrupted');
  }

  private toChannel(channelId: string, frame: Record<string, unknown>): void {
    for (const s of this.byChannel.get(channelId) ?? []) s.send(frame);
  }

  private deliver(event: RecordedEvent): void {
    const data = event.data as Data;
    switch (event.type) {
      case 'PrekeyConsumed':
        if ((data.remaining ?? 0) < LOW_PREKEY_THRESHOLD)
          for (const s of this.byUser.get(data.user_id) ?? []) s.send({ type: 'KeysLow', remaining: data.remaining });
        return;
      case 'SessionRevoked':
        for (const s of [...(this.byUser.get(data.user_id) ?? [])])
          if (s.session_id === data.session_id) s.close(4401, 'session revoked');
        return;
      case 'AccountDeleted':
        for (const s of [...(this.byUser.get(data.user_id) ?? [])]) s.close(4401, 'account deleted');
        return;
      case 'UserSuspended':
        for (const s of [...(this.byUser.get(data.user_id) ?? [])]) s.close(4401, 'account suspended');
        return;
      case 'BotTokenRevoked':
        for (const s of [...(this.byUser.get(data.bot_id) ?? [])])
          if (s.session_id === data.token_id) s.close(4401, 'bot token revoked');
        return;
      case 'MessagePosted':
        this.toChannel(data.channel_id, {
          type: 'MessageCreated',
          channel_id: data.channel_id,
          message: {
            id: data.message_id,
            channel_id: data.channel_id,
            sender_id: data.sender_id,
            ciphertext: data.ciphertext,
            thread_root_id: data.thread_root_id,
            created_at: data.at,
            edited_at: null,
            via_webhook: data.via_webhook,
            webhook: data.webhook ? { username: data.webhook.username, avatar_url: data.webhook.avatar_url } : null,
            ...(data.scheduled_for ? { scheduled_for: data.scheduled_for } : {}),
          },
        });
        for (const userId of data.mentions as string[]) {
          for (const s of this.byUser.get(userId) ?? [])
            s.send({
              type: 'Mentioned',
              channel_id: data.channel_id,
              message_id: data.message_id,
              sender_id: data.sender_id,
            });
        }
        return;
      case 'MessageEdited':
        this.toChannel(data.channel_id, {
          type: 'MessageEdited',
          channel_id: data.channel_id,
          message_id: data.message_id,
          ciphertext: data.ciphertext,
          edited_at: data.at,
        });
        return;
      case 'MessageDeleted':
        this.toChannel(data.channel_id, {
          type: 'MessageDeleted',
          channel_id: data.channel_id,
          message_id: data.message_id,
        });
        return;
      case 'SenderKeyDistributed': {
        if (!this.byChannel.has(data.channel_id)) return;
        const distribution = this.openDistribution(data.channel_id, data.user_id, data.distribution_sealed);
        this.toChannel(data.channel_id, {
          type: 'SenderKeyUpdated',
          channel_id: data.channel_id,
          user_id: data.user_id,
          chain_id: data.chain_id,
          distribution,
        });
        return;
      }
      case 'ChannelCreated':
        for (const userId of data.member_ids as string[]) {
          for (const s of this.byUser.get(userId) ?? [])
            s.send({ type: 'ChannelJoined', channel_id: data.channel_id, scope: data.scope });
        }
        return;
      case 'ChannelMemberJoined':
        for (const s of this.byUser.get(data.user_id) ?? [])
          s.send({ type: 'ChannelJoined', channel_id: data.channel_id, scope: 'group' });
        this.removed.delete(`${data.channel_id}:${data.user_id}`);
        this.toChannel(data.channel_id, { type: 'MemberJoined', channel_id: data.channel_id, user_id: data.user_id });
        return;
      case 'ChannelMemberDeparted': {
        this.removed.add(`${data.channel_id}:${data.user_id}`);
        for (const s of [...(this.byChannel.get(data.channel_id) ?? [])]) {
          if (s.user_id !== data.user_id) continue;
          this.unsubscribe(s, data.channel_id);
          s.send({ type: 'Unsubscribed', channel_id: data.channel_id, reason: data.reason });
        }
        this.toChannel(data.channel_id, {
          type: 'MemberLeft',
          channel_id: data.channel_id,
          user_id: data.user_id,
          reason: data.reason,
        });
        this.toChannel(data.channel_id, { type: 'SenderKeyRotationRequired', channel_id: data.channel_id });
        return;
      }
      case 'PollCreated':
      case 'PollVoted':
      case 'PollClosed':
        this.toChannel(data.channel_id, pollFrame(event.type, data)!);
        return;
      case 'MeetingReminderFired':
        // To every recipient's sockets, subscribed to the channel or not (web push covers those with none).
        for (const userId of data.recipient_ids as string[]) {
          for (const s of this.byUser.get(userId) ?? []) {
            s.send({
              type: 'MeetingReminder',
              meeting_id: data.meeting_id,
              occurrence_id: data.occurrence_id,
              channel_id: data.channel_id,
              title: data.title,
              start: data.start,
              offset_minutes: data.offset_minutes,
              reminder_id: data.reminder_id,
            });
          }
        }
        return;
      case 'ChannelDeleted':
        for (const s of [...(this.byChannel.get(data.channel_id) ?? [])]) {
          this.unsubscribe(s, data.channel_id);
          s.send({ type: 'Unsubscribed', channel_id: data.channel_id, reason: 'deleted' });
        }
        return;
    }
  }
}
