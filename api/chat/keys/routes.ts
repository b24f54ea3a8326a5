// Keys for X3DH: GET /api/keys/{user_id}/bundle (hands out one one-time prekey per fetch),
// POST /api/keys/prekeys/signed (rotate the signed prekey; its signature must verify),
// POST /api/keys/prekeys/one-time (a batch of at most 200), GET /api/keys/prekeys/count.

import { createRoute, z } from '@hono/zod-openapi';
import { PREKEY_BATCH_MAX } from '../../../domain/chat/keys/decider.ts';
import { unconsumedPrekeyCount } from '../../../projections/chat/keys.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { OneTimePrekeyBody, SignedPrekeyBody } from '../accounts/schemas.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { wireBytes } from './bytes.ts';
import { fetchBundle, rotateSignedPrekey, uploadPrekeys } from './commands.ts';

const tags = ['keys'];

const KeyBundle = z
  .object({
    identity_key: wireBytes(32, 'Ed25519 identity public key'),
    signed_prekey: z.object({
      key_id: z.number().int(),
      public_key: wireBytes(32, 'X25519'),
      signature: wireBytes(64, 'Ed25519 signature'),
    }),
    one_time_prekey: z
      .object({ key_id: z.number().int(), public_key: wireBytes(32, 'X25519') })
      .nullable()
      .openapi({ description: 'a different one on every fetch; null once they are exhausted' }),
  })
  .openapi('KeyBundle');

const Count = z.object({ count: z.number().int() }).openapi('PrekeyCount');

export function keyRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/keys/{user_id}/bundle',
      tags,
      summary: 'A prekey bundle for X3DH; each fetch consumes one one-time prekey',
      middleware: [auth] as const,
      request: { params: uuidParams('user_id') },
      responses: {
        200: ok(KeyBundle, 'the bundle'),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such user, or the account was deleted' }),
      },
    }),
    async (c) => {
      const bundle = await fetchBundle(deps, { user_id: c.req.valid('param').user_id }, actorOf(c));
      c.header('Cache-Control', 'no-store');
      return c.json(bundle, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/keys/prekeys/signed',
      tags,
      summary: 'Upload or rotate the signed prekey',
      description:
        "The signature must verify against the account's identity key. The replaced signed prekey stays valid for 7 days, so first messages already sent to it still open; the client keeps its secret that long.",
      middleware: [auth] as const,
      request: { body: jsonBody(SignedPrekeyBody) },
      responses: {
        200: ok(
          z
            .object({
              key_id: z.number().int(),
              previous_key_id: z.number().int().nullable(),
              previous_valid_until: z.iso.datetime().nullable(),
            })
            .openapi('SignedPrekeyRotated'),
          'the current and the previous signed prekey',
        ),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error or signature does not verify',
          409: 'the current signed prekey already has this key_id',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      return c.json(
        await rotateSignedPrekey(
          deps,
          { user_id: c.get('chatUser').user_id, signed_prekey: c.req.valid('json') },
          actorOf(c),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/keys/prekeys/one-time',
      tags,
      summary: `Upload a batch of at most ${PREKEY_BATCH_MAX} one-time prekeys (ids unique per account)`,
      middleware: [auth] as const,
      request: {
        body: jsonBody(
          z
            .strictObject({ prekeys: z.array(OneTimePrekeyBody).min(1).max(PREKEY_BATCH_MAX) })
            .openapi('OneTimePrekeyUpload'),
        ),
      },
      responses: {
        200: ok(Count, 'unconsumed one-time prekeys after the upload'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'validation error (more than 200, repeated ids)',
          409: 'an id was already uploaded, or the store is full (1000)',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const count = await uploadPrekeys(
        deps,
        { user_id: c.get('chatUser').user_id, prekeys: c.req.valid('json').prekeys },
        actorOf(c),
      );
      return c.json({ count }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/keys/prekeys/count',
      tags,
      summary: 'How many one-time prekeys remain',
      middleware: [auth] as const,
      responses: { 200: ok(Count, 'unconsumed one-time prekeys'), ...chatErrors(AUTH_ERRORS) },
    }),
    async (c) => c.json({ count: await unconsumedPrekeyCount(deps.db, c.get('chatUser').user_id) }, 200),
  );

  return app;
}
