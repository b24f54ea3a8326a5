// The chat service's stream categories (`chat.*`): one table, with the id each stream is named by
// and the event types it carries (see domain/shared/streams.ts, and docs/reference/streams.md,
// generated from it).

import { RESERVATION_EVENT_TYPES } from '../shared/reservation.ts';
import { only, streamCategory } from '../shared/streams.ts';
import { ACCOUNT_EVENT_TYPES } from './accounts/events.ts';
import {
  ANNOUNCEMENT_EVENT_TYPES,
  FEEDBACK_EVENT_TYPES,
  PURGE_EVENT_TYPES,
  REPORT_REVIEW_EVENT_TYPES,
} from './admin/events.ts';
import { ASSET_EVENT_TYPES } from './assets/events.ts';
import { BOOKMARK_EVENT_TYPES } from './bookmarks/events.ts';
import { BOT_TOKEN_EVENT_TYPES, BOT_TOKEN_USE_EVENT_TYPES } from './bots/events.ts';
import { CALENDAR_FEED_EVENT_TYPES } from './calendar-feeds/events.ts';
import { CHANNEL_EVENT_TYPES } from './channels/events.ts';
import { COMMUNITY_EVENT_TYPES } from './communities/events.ts';
import { BLOCKED_HASH_EVENT_TYPES, FILE_EVENT_TYPES, UPLOAD_REFUSED_EVENT_TYPES } from './files/events.ts';
import { GROUP_EVENT_TYPES } from './groups/events.ts';
import { INVITE_EVENT_TYPES } from './invites/events.ts';
import { KEYS_EVENT_TYPES, PREKEY_CLAIM_EVENT_TYPES } from './keys/events.ts';
import { MEETING_EVENT_TYPES, REMINDER_EVENT_TYPES } from './meetings/events.ts';
import { MESSAGE_EVENT_TYPES, READ_CURSOR_EVENT_TYPES } from './messages/events.ts';
import { POLL_EVENT_TYPES } from './polls/events.ts';
import { PUSH_SUBSCRIPTION_EVENT_TYPES } from './push/events.ts';
import { SCHEDULED_EVENT_TYPES } from './scheduled/events.ts';
import { SENDER_KEY_EVENT_TYPES } from './sender-keys/events.ts';
import { CHAT_SESSION_EVENT_TYPES } from './sessions/events.ts';
import { TOTP_EVENT_TYPES } from './totp/events.ts';
import { BLOCK_EVENT_TYPES, REPORT_EVENT_TYPES } from './users/events.ts';
import { WEBHOOK_EVENT_TYPES } from './webhooks/events.ts';

export const CHAT_STREAMS = {
  user: streamCategory('chat.user', {
    id: 'user uuid',
    events: ACCOUNT_EVENT_TYPES,
    description: 'A chat account (people and bots): registration, passwords, recovery, profile.',
  }),
  session: streamCategory('chat.session', {
    id: 'session uuid',
    events: CHAT_SESSION_EVENT_TYPES,
    description: 'A login session: one refresh token at a time, rotated on every use.',
  }),
  totp: streamCategory('chat.totp', {
    id: 'user uuid',
    events: TOTP_EVENT_TYPES,
    description: "An account's two-factor authentication (RFC 6238 TOTP).",
  }),
  keys: streamCategory('chat.keys', {
    id: 'user uuid',
    events: KEYS_EVENT_TYPES,
    description: "An account's public keys for X3DH.",
  }),
  prekey: streamCategory<[userId: string, keyId: number]>('chat.prekey', {
    id: '<user uuid>_<key id>',
    events: PREKEY_CLAIM_EVENT_TYPES,
    description: 'The claim of one one-time prekey.',
  }),
  blocks: streamCategory('chat.blocks', {
    id: 'user uuid (the blocker)',
    events: BLOCK_EVENT_TYPES,
    description: 'Whom one user blocks.',
  }),
  report: streamCategory('chat.report', {
    id: 'report uuid',
    events: [...REPORT_EVENT_TYPES, ...REPORT_REVIEW_EVENT_TYPES],
    description: "A report filed by a user, and an admin's verdict on it.",
  }),
  invite: streamCategory('chat.invite', {
    id: 'invite uuid',
    events: INVITE_EVENT_TYPES,
    description: 'A registration invite minted by an instance admin.',
  }),
  community: streamCategory('chat.community', {
    id: 'community uuid',
    events: COMMUNITY_EVENT_TYPES,
    description: 'A community: settings, members and roles, bans, invites.',
  }),
  group: streamCategory('chat.group', {
    id: 'group uuid',
    events: GROUP_EVENT_TYPES,
    description: 'A group inside a community.',
  }),
  channel: streamCategory('chat.channel', {
    id: 'channel uuid',
    events: CHANNEL_EVENT_TYPES,
    description: 'A channel: standalone, in a group, or a direct conversation.',
  }),
  message: streamCategory('chat.message', {
    id: 'message uuid',
    events: MESSAGE_EVENT_TYPES,
    description: 'A message: posted once, edited, reacted to, deleted.',
  }),
  read_cursor: streamCategory<[channelId: string, userId: string]>('chat.read_cursor', {
    id: '<channel uuid>_<user uuid>',
    events: READ_CURSOR_EVENT_TYPES,
    description: "A member's read position in a channel.",
  }),
  sender_keys: streamCategory<[channelId: string, userId: string]>('chat.sender_keys', {
    id: '<channel uuid>_<user uuid>',
    events: SENDER_KEY_EVENT_TYPES,
    description: "A member's sender-key distributions in a channel.",
  }),
  poll: streamCategory('chat.poll', {
    id: 'poll uuid',
    events: POLL_EVENT_TYPES,
    description: 'A poll in a channel and its votes.',
  }),
  scheduled_message: streamCategory('chat.scheduled_message', {
    id: 'scheduled message uuid (the message it posts keeps it)',
    events: SCHEDULED_EVENT_TYPES,
    description: 'A message scheduled to be posted later.',
  }),
  meeting: streamCategory('chat.meeting', {
    id: 'meeting uuid',
    events: MEETING_EVENT_TYPES,
    description: 'A channel meeting: a series or one occurrence.',
  }),
  meeting_reminder: streamCategory('chat.meeting_reminder', {
    id: '<meeting uuid>-<occurrence>-<offset>',
    events: REMINDER_EVENT_TYPES,
    description: 'One reminder of a meeting occurrence, fired once.',
  }),
  calendar_feed_token: streamCategory('chat.calendar_feed_token', {
    id: 'token uuid',
    events: CALENDAR_FEED_EVENT_TYPES,
    description: "A member's calendar feed token.",
  }),
  bookmark: streamCategory<[userId: string, messageId: string]>('chat.bookmark', {
    id: '<user uuid>_<message uuid>',
    events: BOOKMARK_EVENT_TYPES,
    description: "A member's bookmark of a message.",
  }),
  push_subscription: streamCategory('chat.push_subscription', {
    id: 'id derived from the push endpoint',
    events: PUSH_SUBSCRIPTION_EVENT_TYPES,
    description: 'A web-push subscription of one browser.',
  }),
  uploads: streamCategory('chat.uploads', {
    id: 'user uuid (the uploader)',
    events: FILE_EVENT_TYPES,
    description: "A user's uploaded files.",
  }),
  blocked_hash: streamCategory('chat.blocked_hash', {
    id: 'sha256 of the file bytes',
    events: BLOCKED_HASH_EVENT_TYPES,
    description: 'Content blocked by an admin.',
  }),
  upload_refusal: streamCategory('chat.upload_refusal', {
    id: 'refusal uuid',
    events: UPLOAD_REFUSED_EVENT_TYPES,
    description: 'An upload refused for blocked content (nothing stored).',
  }),
  space_assets: streamCategory('chat.space_assets', {
    id: 'community or group uuid',
    events: only(ASSET_EVENT_TYPES, 'SpaceAssetUploaded'),
    description: "A community's or group's icon and background.",
  }),
  community_emojis: streamCategory('chat.community_emojis', {
    id: 'community uuid',
    events: only(ASSET_EVENT_TYPES, 'EmojiAdded', 'EmojiRemoved'),
    description: "A community's custom emoji.",
  }),
  bot_token: streamCategory('chat.bot_token', {
    id: 'token uuid',
    events: BOT_TOKEN_EVENT_TYPES,
    description: 'A bot token, minted for a bot account.',
  }),
  bot_token_use: streamCategory('chat.bot_token_use', {
    id: 'token uuid',
    events: BOT_TOKEN_USE_EVENT_TYPES,
    description: 'Uses of a bot token, coalesced; no decision reads it.',
  }),
  webhook: streamCategory('chat.webhook', {
    id: 'webhook uuid',
    events: WEBHOOK_EVENT_TYPES,
    description: 'An incoming webhook on a channel.',
  }),
  purge: streamCategory('chat.purge', {
    id: 'purge uuid',
    events: PURGE_EVENT_TYPES,
    description: "An admin's purge of a message, a user's messages or a channel.",
  }),
  announcement: streamCategory('chat.announcement', {
    id: 'announcement uuid',
    events: ANNOUNCEMENT_EVENT_TYPES,
    description: 'An instance announcement, and users dismissing it.',
  }),
  feedback: streamCategory('chat.feedback', {
    id: 'feedback uuid',
    events: FEEDBACK_EVENT_TYPES,
    description: 'User feedback, its mirror to an issue tracker, its triage.',
  }),
  owner_reservation: streamCategory('chat.owner_reservation', {
    id: '`instance`',
    events: RESERVATION_EVENT_TYPES,
    description: 'Reservation of the instance owner: the first account (kind `chat_owner`).',
  }),
  username_reservation: streamCategory('chat.username_reservation', {
    id: 'lowercased username',
    events: RESERVATION_EVENT_TYPES,
    description: 'Reservation of a username (kind `chat_username`).',
  }),
  email_reservation: streamCategory('chat.email_reservation', {
    id: 'sha256 of the normalised e-mail',
    events: RESERVATION_EVENT_TYPES,
    description: 'Reservation of an e-mail address (kind `chat_email`).',
  }),
} as const;

/** The reservation category of each reservation kind the chat service reserves. */
export const CHAT_RESERVATIONS = {
  chat_owner: CHAT_STREAMS.owner_reservation,
  chat_username: CHAT_STREAMS.username_reservation,
  chat_email: CHAT_STREAMS.email_reservation,
} as const;

export const chatUserStream = CHAT_STREAMS.user.stream;
export const chatSessionStream = CHAT_STREAMS.session.stream;
export const totpStream = CHAT_STREAMS.totp.stream;
export const keysStream = CHAT_STREAMS.keys.stream;
export const prekeyClaimStream = CHAT_STREAMS.prekey.stream;
export const blocksStream = CHAT_STREAMS.blocks.stream;
export const reportStream = CHAT_STREAMS.report.stream;
export const inviteStream = CHAT_STREAMS.invite.stream;
export const communityStream = CHAT_STREAMS.community.stream;
export const groupStream = CHAT_STREAMS.group.stream;
export const channelStream = CHAT_STREAMS.channel.stream;
export const messageStream = CHAT_STREAMS.message.stream;
export const readCursorStream = CHAT_STREAMS.read_cursor.stream;
export const senderKeyStream = CHAT_STREAMS.sender_keys.stream;
export const pollStream = CHAT_STREAMS.poll.stream;
export const scheduledStream = CHAT_STREAMS.scheduled_message.stream;
export const meetingStream = CHAT_STREAMS.meeting.stream;
export const reminderStream = CHAT_STREAMS.meeting_reminder.stream;
export const calendarFeedStream = CHAT_STREAMS.calendar_feed_token.stream;
export const bookmarkStream = CHAT_STREAMS.bookmark.stream;
export const pushSubscriptionStream = CHAT_STREAMS.push_subscription.stream;
export const uploadsStream = CHAT_STREAMS.uploads.stream;
export const blockedHashStream = CHAT_STREAMS.blocked_hash.stream;
export const uploadRefusalStream = CHAT_STREAMS.upload_refusal.stream;
export const spaceAssetStream = CHAT_STREAMS.space_assets.stream;
export const emojiStream = CHAT_STREAMS.community_emojis.stream;
export const botTokenStream = CHAT_STREAMS.bot_token.stream;
export const botTokenUseStream = CHAT_STREAMS.bot_token_use.stream;
export const webhookStream = CHAT_STREAMS.webhook.stream;
export const purgeStream = CHAT_STREAMS.purge.stream;
export const announcementStream = CHAT_STREAMS.announcement.stream;
export const feedbackStream = CHAT_STREAMS.feedback.stream;
