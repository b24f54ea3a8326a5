// The connector's pure rules: the connect request's checks, mentions (inbound rule 2), reply
// modes, and the stable conversation id (rule 4).

import { createHash } from 'node:crypto';
import type { ReplyMode } from '../profiles/events.ts';

export type { ReplyMode };

/** The chat service's username rule. */
export const CHAT_USERNAME = /^[A-Za-z0-9_]{3,32}$/;
/** A chat-service bot token: `cb_` + 64 lowercase hex. */
export const BOT_TOKEN = /^cb_[0-9a-f]{64}$/;
export const TOKEN_PREFIX_CHARS = 11;

const USERNAME_CHAR = /[A-Za-z0-9_]/;

/**
 * Does `text` mention `@<username>`? Case-sensitive; the mention is a whole token: not preceded
 * by a username character, `.` or `@` (so `bob@host` and `a.@bot` are not mentions) and not
 * followed by a username character (so `@bot_x` does not mention `bot`). `@everyone`, `@here`
 * and `@channel` never count, even for a bot named so.
 */
export function mentions(text: string, username: string): boolean {
  if (!username || username === 'everyone' || username === 'here' || username === 'channel') return false;
  const needle = `@${username}`;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + 1)) {
    const before = at > 0 ? text[at - 1]! : '';
    const after = text[at + needle.length] ?? '';
    if (before && (USERNAME_CHAR.test(before) || before === '.' || before === '@')) continue;
    if (after && USERNAME_CHAR.test(after)) continue;
    return true;
  }
  return false;
}

export type Surface = 'dm' | 'channel';

/** Rule 2: does the bot answer this message at all? */
export function shouldAnswer(mode: ReplyMode, surface: Surface, mentioned: boolean): boolean {
  if (surface === 'dm') return mode === 'dm_only' || mode === 'both';
  return (mode === 'channel_mention' || mode === 'both') && mentioned;
}

/** Plain `http` only to loopback (a test or a sidecar on the same host); everything else https. */
export function instanceUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'instance_url is not a URL';
  }
  if (url.protocol === 'https:') return null;
  if (url.protocol !== 'http:') return 'instance_url must be https (or http to a loopback address)';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  return loopback ? null : 'plain http is accepted only to a loopback address; use https';
}

/** The instance URL without a trailing slash (paths are appended to it). */
export const normaliseInstanceUrl = (raw: string) => raw.replace(/\/+$/, '');

// UUIDv5 (RFC 9562, SHA-1 name-based) under a fixed namespace of this connector.
const NAMESPACE = '6f1c2a4e-8b7d-4c3e-9a51-2d0b7e4f1c88';

export function uuidV5(name: string, namespace = NAMESPACE): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(name, 'utf8').digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Rule 4: one conversation per (integration, channel, sender). */
export const conversationIdFor = (integrationId: string, channelId: string, senderId: string) =>
  uuidV5(`${integrationId}:${channelId}:${senderId}`);

/** Rule 5's canned reply when a per-user limit trips (at most one per user a minute). */
export const LIMIT_REPLY =
  'You are sending me messages faster than I may answer them. Please wait a little and try again.';
export const COST_REPLY = 'I have reached my budget for today. Please try again tomorrow.';

export interface BotsHealth {
  status: 'idle' | 'connected' | 'degraded' | 'disconnected' | 'standby';
  active: number;
  connected: number;
  down: number;
  standby: number;
}

/**
 * `integrations.chatsvc_bot_ws` from the socket states of this instance's active bots: idle (none),
 * standby (all held by another instance), connected (none down), disconnected (all down, none
 * held elsewhere), else degraded. A socket still connecting counts as down.
 */
export function botsHealth(states: string[]): BotsHealth {
  const connected = states.filter((s) => s === 'connected').length;
  const standby = states.filter((s) => s === 'standby').length;
  const down = states.length - connected - standby;
  const status =
    states.length === 0
      ? 'idle'
      : standby === states.length
        ? 'standby'
        : down === 0
          ? 'connected'
          : connected === 0 && standby === 0
            ? 'disconnected'
            : 'degraded';
  return { status, active: states.length, connected, down, standby };
}

/** Exponential backoff with full jitter between 1 and 60 seconds (reconnects). */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(60_000, 1000 * 2 ** Math.max(0, attempt));
  return Math.max(1000, Math.floor(random() * ceiling));
}
