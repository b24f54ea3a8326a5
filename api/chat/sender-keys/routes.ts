// Sender keys: POST /api/channels/{id}/sender-keys (a member uploads the distribution of their
// current chain) and GET (every member's distributions). Members only (403 otherwise). The
// distribution holds the chain key: it is sealed with the server key before it reaches the log
// or the read model, and opened only for members. Members subscribed to the channel hear
// SenderKeyUpdated; a member who leaves, is kicked or banned loses theirs, and the rest hear
// SenderKeyRotationRequired (api/chat/ws/hub.ts).

import { createRoute, z } from '@hono/zod-openapi';
import { senderKeysOf } from '../../../projections/chat/sender-keys.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { memberChannel } from '../access.ts';
import { actorOf, requireChatUser } from '../auth.ts';
import { CHANNEL_ERRORS } from '../channels/routes.ts';
import type { ChatDeps } from '../deps.ts';
import { chatErrors, chatRouter } from '../router.ts';
import { wireBytes } from '../keys/bytes.ts';
import { distributeSenderKey, openDistribution } from './commands.ts';

const tags = ['keys'];
const u32 = z.number().int().min(0).max(0xffff_ffff);

export const Distribution = z
  .strictObject({
    chain_id: u32,
    iteration: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    chain_key: wireBytes(32, 'the chain key at `iteration`'),
    sender_id: z.string().min(1).max(64).openapi({ description: "the uploader's user id" }),
  })
  .openapi('SenderKeyDistribution');

export type DistributionWire = z.infer<typeof Distribution>;

export function senderKeyRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const IdParam = uuidParams('id');

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/channels/{id}/sender-keys',
      tags,
      summary: "Upload the distribution of the caller's sender-key chain for this channel (members only)",
      middleware: [auth] as const,
      request: {
        params: IdParam,
        body: jsonBody(z.strictObject({ chain_id: u32, distribution: Distribution }).openapi('SenderKeyUpload')),
      },
      responses: {
        201: ok(
          z.object({ channel_id: z.uuid(), user_id: z.uuid(), chain_id: z.number().int() }).openapi('SenderKeyStored'),
          'stored',
        ),
        ...chatErrors({
          ...CHANNEL_ERRORS,
          400: 'validation error: chain ids differ, or sender_id is not the caller',
          413: 'body too large',
        }),
      },
    }),
    async (c) => {
      const me = c.get('chatUser').user_id;
      const body = c.req.valid('json');
      const { channel_id } = await distributeSenderKey(
        deps,
        { channel_id: c.req.valid('param').id, user_id: me, ...body },
        actorOf(c),
      );
      return c.json({ channel_id, user_id: me, chain_id: body.chain_id }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/channels/{id}/sender-keys',
      tags,
      summary: "Every member's sender-key distributions for this channel (members only)",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(
          z
            .object({
              sender_keys: z.array(
                z.object({
                  user_id: z.uuid(),
                  chain_id: z.number().int(),
                  distribution: Distribution,
                  updated_at: z.iso.datetime(),
                }),
              ),
            })
            .openapi('SenderKeys'),
          'by member, oldest chain first',
        ),
        ...chatErrors(CHANNEL_ERRORS),
      },
    }),
    async (c) => {
      const access = await memberChannel(deps.db, c.req.valid('param').id, c.get('chatUser').user_id);
      const rows = await senderKeysOf(deps.db, access.channel.id);
      return c.json(
        {
          sender_keys: rows.map((r) => ({
            user_id: r.user_id,
            chain_id: r.chain_id,
            distribution: openDistribution(deps.sealKey, access.channel.id, r.user_id, r.distribution_sealed),
            updated_at: r.updated_at.toISOString(),
          })),
        },
        200,
      );
    },
  );

  return app;
}
