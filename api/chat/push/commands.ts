// Web push's use cases: subscribe a browser (its keys checked, its endpoint through the SSRF
// guard, at most PUSH_LIMITS.perUser per user, endpoint and keys sealed before they reach the
// log) and unsubscribe. The slice's application layer and the only caller of the command runner
// for the push routes (the sender's drops of gone subscriptions are ./reactor.ts's).

import { createHash, ECDH } from 'node:crypto';
import { sealSecret } from '../../../crypto/seal.ts';
import {
  endpointSealContext,
  keysSealContext,
  pushSubscriptionDecider,
  pushSubscriptionId,
} from '../../../domain/chat/push/decider.ts';
import { pushSubscriptionStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { checkDestination, OutboundError } from '../../../infra/outbound/guard.ts';
import { pushSubscriptionsOf, type PushSubscriptionRow } from '../../../projections/chat/push.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { ChatDeps } from '../deps.ts';
import { coded } from '../files/upload.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'sealKey' | 'config'>;

export const PUSH_LIMITS = { endpointMax: 2048, perUser: 20 };

const fromBase64url = (value: string) => Buffer.from(value.replace(/=+$/, ''), 'base64url');

/** The subscription's keys, checked: a point on P-256 and a 16-byte secret. */
function checkKeys(keys: { p256dh: string; auth: string }): { p256dh: string; auth: string } {
  const point = fromBase64url(keys.p256dh);
  const auth = fromBase64url(keys.auth);
  try {
    if (point.length !== 65 || point[0] !== 4) throw new Error('not uncompressed');
    ECDH.convertKey(point, 'prime256v1', undefined, undefined, 'uncompressed');
  } catch {
    throw coded(400, 'validation_failed', 'keys.p256dh must be an uncompressed P-256 public key (65 bytes, base64url)');
  }
  if (auth.length !== 16) throw coded(400, 'validation_failed', 'keys.auth must be 16 bytes (base64url)');
  return { p256dh: point.toString('base64url'), auth: auth.toString('base64url') };
}

/** https, or http to loopback under the test switch; then the SSRF guard's checks. */
async function checkEndpoint(deps: Deps, raw: string): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw coded(400, 'validation_failed', 'endpoint must be a URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && deps.config.outbound.allowLoopback)) {
    throw coded(422, 'destination_not_allowed', 'endpoint must be an https URL');
  }
  try {
    await checkDestination(url, deps.config.outbound);
  } catch (error) {
    if (error instanceof OutboundError)
      throw coded(422, error.code === 'destination_not_allowed' ? error.code : 'fetch_failed', error.message);
    throw error;
  }
  return url;
}

export interface Subscribe {
  user_id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

/** Subscribes a browser: the subscription as the read model has it, and whether it is new (the same browser again: new keys replace the old). */
export async function subscribe(
  deps: Deps,
  input: Subscribe,
  context: CommandContext,
): Promise<{ row: PushSubscriptionRow; created: boolean }> {
  const keys = checkKeys(input.keys);
  const url = await checkEndpoint(deps, input.endpoint);
  const endpoint = url.toString();
  const id = pushSubscriptionId(endpoint);
  const mine = await pushSubscriptionsOf(deps.db, input.user_id);
  if (!mine.some((s) => s.id === id) && mine.length >= PUSH_LIMITS.perUser) {
    throw coded(
      409,
      'subscription_limit_reached',
      `at most ${PUSH_LIMITS.perUser} push subscriptions per user: remove one first`,
    );
  }
  const keysJson = JSON.stringify(keys);
  const result = await deps.commands.run(
    pushSubscriptionStream(id),
    pushSubscriptionDecider,
    {
      type: 'Subscribe',
      subscription_id: id,
      user_id: input.user_id,
      origin: url.origin,
      endpoint_sealed: sealSecret(deps.sealKey, endpoint, endpointSealContext(id)),
      keys_sealed: sealSecret(deps.sealKey, keysJson, keysSealContext(id)),
      keys_hash: createHash('sha256').update(`push_keys:${keysJson}`).digest('hex'),
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  const row = (await pushSubscriptionsOf(deps.db, input.user_id)).find((s) => s.id === id);
  if (!row) throw new ApiError(409, 'conflict', 'the subscription changed meanwhile: try again');
  const created = result.events.some((e) => e.type === 'PushSubscriptionAdded' && mine.every((s) => s.id !== id));
  return { row, created };
}

/** Unsubscribes one of the caller's subscriptions (404 `push_subscription_not_found` otherwise, the decider's). */
export async function unsubscribe(
  deps: Deps,
  input: { subscription_id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  await deps.commands.run(
    pushSubscriptionStream(input.subscription_id),
    pushSubscriptionDecider,
    {
      type: 'Unsubscribe',
      subscription_id: input.subscription_id,
      user_id: input.user_id,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
}
