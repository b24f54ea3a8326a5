// Keys for X3DH: GET /api/keys/{user_id}/bundle (hands out one one-time prekey per fetch),
// POST /api/keys/prekeys/signed (rotate the signed prekey; its signature must verify),
// POST /api/keys/prekeys/one-time (a batch of at most 200), GET /api/keys/prekeys/count.

import { createRoute, z } from '@hono/zod-openapi';
import { signedPrekeyVerifies } from '../../../crypto/prekeys.ts';
import { prekeyClaimDecider } from '../../../domain/chat/keys/claim.ts';
import { prekeyClaimStream, keysStream } from '../../../domain/chat/keys/events.ts';
import { keysDecider, PREKEY_BATCH_MAX } from '../../../domain/chat/keys/decider.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { bundleSource, identityKeyOf, signedPrekeyOf, unconsumedPrekeyCount, type BundleSource } from '../../../projections/chat/keys.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { prekeysOf } from '../accounts/accounts.ts';
import { OneTimePrekeyBody, SignedPrekeyBody } from '../accounts/schemas.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { fromBase64, toBase64, wireBytes } from './bytes.ts';

const tags = ['keys'];

const KeyBundle = z.object({
  identity_key: wireBytes(32, 'Ed25519 identity public key'),
  signed_prekey: z.object({ key_id: z.number().int(), public_key: wireBytes(32, 'X25519'), signature: wireBytes(64, 'Ed25519 signature') }),
  one_time_prekey: z.object({ key_id: z.number().int(), public_key: wireBytes(32, 'X25519') }).nullable()
    .openapi({ description: 'a different one on every fetch; null once they are exhausted' }),
}).openapi('KeyBundle');

const UserIdParam = z.object({ user_id: z.string().openapi({ param: { name: 'user_id', in: 'path' }, format: 'uuid' }) });
const Count = z.object({ count: z.number().int() }).openapi('PrekeyCount');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Unconsumed prekeys a fetch looks at per round; concurrent fetches that lose a claim move to the next. */
const CANDIDATES = 16;
const ROUNDS = 5;

/**
 * The bundle of `userId`, handing out the lowest unconsumed one-time prekey this fetch can
 * claim (null once none is left). Null for an account without keys.
 */
async function fetchBundle(deps: ChatDeps, userId: string, context: CommandContext) {
  for (let round = 0; round < ROUNDS; round++) {
    const source = await bundleSource(deps.db, userId, CANDIDATES);
    if (!source) return null;
    if (source.candidates.length === 0) return bundleOf(source, null);
    let remaining = source.unconsumed;
    for (const candidate of source.candidates) {
      remaining -= 1;
      try {
        await deps.commands.run(prekeyClaimStream(userId, candidate.key_id), prekeyClaimDecider, {
          type: 'Claim', user_id: userId, key_id: candidate.key_id, public_key: candidate.public_key, remaining: Math.max(0, remaining),
          fetched_by: context.actor.id ?? '', at: deps.clock.now().toISOString(),
        }, context);
        return bundleOf(source, candidate);
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'prekey_taken')) throw error;
      }
    }
    // Every candidate was taken by concurrent fetches: look again.
  }
  const last = await bundleSource(deps.db, userId, 0);
  return last && bundleOf(last, null);
}

const bundleOf = (source: BundleSource, oneTime: { key_id: number; public_key: string } | null) => ({
  identity_key: fromBase64(source.identity_key),
  signed_prekey: { key_id: Number(source.signed_key_id), public_key: fromBase64(source.signed_public_key), signature: fromBase64(source.signed_signature) },
  one_time_prekey: oneTime && { key_id: oneTime.key_id, public_key: fromBase64(oneTime.public_key) },
});

export function keyRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(createRoute({
    method: 'get', path: '/api/keys/{user_id}/bundle', tags, summary: 'A prekey bundle for X3DH; each fetch consumes one one-time prekey',
    middleware: [auth] as const,
    request: { params: UserIdParam },
    responses: { 200: ok(KeyBundle, 'the bundle'), ...chatErrors({ ...AUTH_ERRORS, 404: 'no such user, or the account was deleted' }) },
  }), async (c) => {
    const userId = c.req.valid('param').user_id;
    if (!UUID.test(userId)) throw new ApiError(404, 'user_not_found', 'no such user');
    const bundle = await fetchBundle(deps, userId, actorOf(c));
    if (!bundle) throw new ApiError(404, 'user_not_found', 'no such user');
    c.header('Cache-Control', 'no-store');
    return c.json(bundle, 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/keys/prekeys/signed', tags, summary: 'Upload or rotate the signed prekey',
    description: 'The signature must verify against the account\'s identity key. The replaced signed prekey stays valid for 7 days, so first messages already sent to it still open; the client keeps its secret that long.',
    middleware: [auth] as const,
    request: { body: jsonBody(SignedPrekeyBody) },
    responses: {
      200: ok(z.object({ key_id: z.number().int(), previous_key_id: z.number().int().nullable(), previous_valid_until: z.iso.datetime().nullable() }).openapi('SignedPrekeyRotated'), 'the current and the previous signed prekey'),
      ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error or signature does not verify', 409: 'the current signed prekey already has this key_id', 413: 'body too large' }),
    },
  }), async (c) => {
    const userId = c.get('chatUser').user_id;
    const body = c.req.valid('json');
    const identity = await identityKeyOf(deps.db, userId);
    if (!identity || !signedPrekeyVerifies(Uint8Array.from(fromBase64(identity)), Uint8Array.from(body.public_key), Uint8Array.from(body.signature))) {
      throw new ApiError(400, 'bad_signature', 'signature does not verify against the account\'s identity key');
    }
    await deps.commands.run(keysStream(userId), keysDecider, {
      type: 'UploadSignedPrekey', signed_prekey: { key_id: body.key_id, public_key: toBase64(body.public_key), signature: toBase64(body.signature) }, at: deps.clock.now().toISOString(),
    }, actorOf(c));
    const row = await signedPrekeyOf(deps.db, userId);
    return c.json({
      key_id: body.key_id,
      previous_key_id: row?.previous_key_id == null ? null : Number(row.previous_key_id),
      previous_valid_until: row?.previous_valid_until?.toISOString() ?? null,
    }, 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/keys/prekeys/one-time', tags, summary: `Upload a batch of at most ${PREKEY_BATCH_MAX} one-time prekeys (ids unique per account)`,
    middleware: [auth] as const,
    request: { body: jsonBody(z.strictObject({ prekeys: z.array(OneTimePrekeyBody).min(1).max(PREKEY_BATCH_MAX) }).openapi('OneTimePrekeyUpload')) },
    responses: {
      200: ok(Count, 'unconsumed one-time prekeys after the upload'),
      ...chatErrors({ ...AUTH_ERRORS, 400: 'validation error (more than 200, repeated ids)', 409: 'an id was already uploaded, or the store is full (1000)', 413: 'body too large' }),
    },
  }), async (c) => {
    const userId = c.get('chatUser').user_id;
    const unconsumed = await unconsumedPrekeyCount(deps.db, userId);
    await deps.commands.run(keysStream(userId), keysDecider, { type: 'UploadPrekeys', prekeys: prekeysOf(c.req.valid('json').prekeys), unconsumed, at: deps.clock.now().toISOString() }, actorOf(c));
    return c.json({ count: await unconsumedPrekeyCount(deps.db, userId) }, 200);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/keys/prekeys/count', tags, summary: 'How many one-time prekeys remain', middleware: [auth] as const,
    responses: { 200: ok(Count, 'unconsumed one-time prekeys'), ...chatErrors(AUTH_ERRORS) },
  }), async (c) => c.json({ count: await unconsumedPrekeyCount(deps.db, c.get('chatUser').user_id) }, 200));

  return app;
}
