// Sending one web push (RFC 8030) with VAPID (RFC 8292) and an aes128gcm payload (RFC 8291):
// `web-push` builds the request (encryption, the signed JWT, TTL, Topic, Urgency headers), the
// SSRF guard carries it (infra/outbound/guard.ts: the endpoint's address is checked inside the
// connection's lookup; no redirect is followed). Endpoints and keys are never logged here.

import { createHash } from 'node:crypto';
import webpush from 'web-push';
import { guardedSend, type OutboundPolicy } from '../outbound/guard.ts';

export interface VapidKeys {
  publicKey: string;
  privateKey: string;
}
export interface Vapid {
  subject: string;
  keys: VapidKeys;
}
export interface PushTarget {
  endpoint: string;
  keys: { p256dh: string; auth: string };
}
export interface PushMessage {
  /** The cleartext the browser's service worker reads (encrypted to the subscription's keys). */
  payload: string;
  /** How long the push service keeps it for an unreachable browser. */
  ttlSeconds: number;
  /** A later message with the same topic replaces an undelivered earlier one. */
  topic?: string;
  urgency: 'very-low' | 'low' | 'normal' | 'high';
}

export const PUSH_SEND_TIMEOUT_MS = 10_000;

/** A new VAPID key pair (P-256), by web-push. */
export const generateVapidKeys = (): VapidKeys => webpush.generateVAPIDKeys();

/** A Topic header value (RFC 8030 section 5.4: at most 32 URL-safe base64 characters) naming `key`. */
export const pushTopic = (key: string): string =>
  createHash('sha256').update(key).digest().subarray(0, 24).toString('base64url');

/** Send one message; the push service's status (201 accepted; 404/410 the subscription is gone). Throws OutboundError when refused or unreachable. */
export async function sendWebPush(
  target: PushTarget,
  message: PushMessage,
  vapid: Vapid,
  policy: OutboundPolicy,
): Promise<number> {
  const details = webpush.generateRequestDetails(target, message.payload, {
    vapidDetails: { subject: vapid.subject, publicKey: vapid.keys.publicKey, privateKey: vapid.keys.privateKey },
    TTL: Math.max(0, Math.floor(message.ttlSeconds)),
    urgency: message.urgency,
    contentEncoding: 'aes128gcm',
    ...(message.topic ? { topic: message.topic } : {}),
  });
  const headers: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(details.headers)) if (v !== undefined) headers[k] = v as string | number;
  const { status } = await guardedSend(details.endpoint, {
    policy,
    method: details.method,
    headers,
    body: details.body ? Buffer.from(details.body) : null,
    timeoutMs: PUSH_SEND_TIMEOUT_MS,
    maxBytes: 4096,
  });
  return status;
}
