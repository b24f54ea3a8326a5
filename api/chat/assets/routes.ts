// Gated assets: community icon and banner (POST /api/communities/{cid}/icon, /banner), group
// icon, banner and voice background (POST /api/groups/{id}/icon, /banner, /voice-background),
// served at GET /api/community-assets/{filename} and /api/group-assets/{filename}; custom emoji
// (GET/POST /api/communities/{cid}/emojis, DELETE .../emojis/{eid}, GET /api/emojis/{id}), and
// the current assets of a space (GET /api/communities/{cid}/assets, /api/groups/{id}/assets).
//
// Uploads: community owners and admins (groups: the group owner or a community admin); a raster
// image recognised by its bytes (anything else, SVG included, 415), at most 8 MiB (413); a new
// one replaces the current one of its kind.
//
// One gate for every read: signed in (401), then a member of the community (for a private
// group's assets, of the group, or a community admin), not banned, or an instance admin or
// owner. Everyone else gets exactly the bytes of a missing asset's 404.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { EMOJI_MAX, EMOJI_NAME } from '../../../domain/chat/assets/decider.ts';
import { atLeast } from '../../../domain/chat/communities/roles.ts';
import {
  assetByFilename,
  communityEmojis,
  currentAssets,
  emojiById,
  type AssetRow,
  type EmojiRow,
} from '../../../projections/chat/assets.ts';
import { communityAccess } from '../../../projections/chat/communities.ts';
import { groupById, groupMemberRole } from '../../../projections/chat/groups.ts';
import { ok } from '../../shared/openapi.ts';
import { isUuid, uuidParams } from '../../shared/params.ts';
import { bodyLimit } from '../../shared/route-policy.ts';
import { communityFor, groupFor } from '../access.ts';
import { actorOf, requireChatUser, type ChatEnv, type ChatPrincipal } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { blobResponses, serveBlob } from '../files/serve.ts';
import { coded, isRasterImage, multipartBody, receiveUpload, sniff } from '../files/upload.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { addEmoji, removeEmoji, setCommunityAsset, setGroupAsset, type Image } from './commands.ts';

const tags = ['assets'];
const MiB = 1024 * 1024;
export const ASSET_MAX_BYTES = 8 * MiB;
export const ASSET_BODY_LIMIT = ASSET_MAX_BYTES + 64 * 1024;

const Asset = z
  .object({
    kind: z.enum(['icon', 'banner', 'voice_background']),
    filename: z.string(),
    url: z.string(),
    mime_type: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    created_at: z.iso.datetime(),
  })
  .openapi('SpaceAsset');
const Emoji = z
  .object({
    id: z.uuid(),
    community_id: z.uuid(),
    name: z.string(),
    url: z.string(),
    mime_type: z.string(),
    size: z.number().int(),
    created_by: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .openapi('Emoji');
const assetUrl = (a: Pick<AssetRow, 'scope' | 'filename'>) =>
  `/api/${a.scope === 'community' ? 'community' : 'group'}-assets/${a.filename}`;
const assetView = (a: AssetRow) => ({
  kind: a.kind,
  filename: a.filename,
  url: assetUrl(a),
  mime_type: a.mime_type,
  size: a.size,
  sha256: a.sha256,
  created_at: a.created_at.toISOString(),
});
const emojiView = (e: EmojiRow) => ({
  id: e.id,
  community_id: e.community_id,
  name: e.name,
  url: `/api/emojis/${e.id}`,
  mime_type: e.mime_type,
  size: e.size,
  created_by: e.created_by,
  created_at: e.created_at.toISOString(),
});

/** The one refusal of every gated read: the same bytes whether the asset is missing or hidden. */
const NOT_FOUND_BODY = JSON.stringify({ error: 'no such asset', code: 'not_found' });
const assetNotFound = (c: Context) => c.body(NOT_FOUND_BODY, 404, { 'Content-Type': 'application/json' });
class Hidden extends Error {}

const UPLOAD_ERRORS = {
  ...AUTH_ERRORS,
  400: 'not multipart, or no file part',
  403: 'not an owner or admin',
  404: 'no such community or group',
  413: 'file_too_large (8 MiB)',
  415: 'unsupported_media_type: not a raster image (SVG included)',
};
const GATED = blobResponses('the image', ['image/*']);
const FilenameParam = z.object({ filename: z.string().openapi({ param: { name: 'filename', in: 'path' } }) });

export function assetRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  // The upload routes read their multipart body as a stream (files/upload.ts counts the bytes).
  const upload = bodyLimit(ASSET_BODY_LIMIT, { streamed: true });
  const me = (c: Context<ChatEnv>) => c.get('chatUser');

  /** Passes, or throws Hidden (answered with the one 404). */
  const gate = async (user: ChatPrincipal, communityId: string, groupId: string | null) => {
    if (user.is_admin || user.is_owner) return;
    const access = isUuid(communityId) ? await communityAccess(deps.db, communityId, user.user_id) : null;
    if (!access?.role || access.banned) throw new Hidden();
    if (groupId) {
      const group = await groupById(deps.db, groupId);
      if (!group) throw new Hidden();
      if (
        group.visibility === 'private' &&
        !atLeast(access.role, 'admin') &&
        !(await groupMemberRole(deps.db, groupId, user.user_id))
      )
        throw new Hidden();
    }
  };
  const gated = async (
    c: Context<ChatEnv>,
    find: () => Promise<{
      community_id: string;
      group_id: string | null;
      sha256: string;
      mime_type: string;
      size: number;
    } | null>,
  ) => {
    try {
      const found = await find();
      if (!found) throw new Hidden();
      await gate(me(c), found.community_id, found.group_id);
      if (!(await deps.files.exists(found.sha256))) throw new Hidden();
      return serveBlob(c, deps.files, {
        sha256: found.sha256,
        size: found.size,
        mime_type: found.mime_type,
        name: null,
        inline: true,
      });
    } catch (error) {
      if (error instanceof Hidden) return assetNotFound(c);
      throw error;
    }
  };

  /** An uploaded raster image, stored as a blob. */
  const image = async (c: Context<ChatEnv>, fields: string[] = []): Promise<Image> => {
    const upload = await receiveUpload(c, deps.files, {
      maxFileBytes: ASSET_MAX_BYTES,
      maxBodyBytes: ASSET_BODY_LIMIT,
      fields,
      tooLarge: () =>
        coded(413, 'file_too_large', `an image is at most ${ASSET_MAX_BYTES} bytes`, { limit_bytes: ASSET_MAX_BYTES }),
    });
    const { mime, ext } = await sniff(upload.file.head);
    if (!isRasterImage(mime)) {
      await deps.files.discard(upload.file);
      throw coded(
        415,
        'unsupported_media_type',
        `a raster image (PNG, JPEG, GIF, WebP, AVIF) is expected, not ${mime}`,
      );
    }
    return { file: upload.file, mime, ext, fields: upload.fields };
  };

  for (const kind of ['icon', 'banner'] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/api/communities/{cid}/${kind}`,
        tags,
        summary: `Set the community's ${kind} (owners and admins; a raster image, at most 8 MiB)`,
        middleware: [auth, upload] as const,
        request: { params: uuidParams('cid'), body: multipartBody('the image', {}) },
        responses: { 201: ok(Asset, 'set; the previous one is gone'), ...chatErrors(UPLOAD_ERRORS) },
      }),
      async (c) => {
        const row = await setCommunityAsset(
          deps,
          { community_id: c.req.valid('param').cid, user_id: me(c).user_id, kind },
          () => image(c),
          actorOf(c),
        );
        return c.json(assetView(row), 201);
      },
    );
  }

  for (const [path, kind] of [
    ['icon', 'icon'],
    ['banner', 'banner'],
    ['voice-background', 'voice_background'],
  ] as const) {
    app.openapi(
      createRoute({
        method: 'post',
        path: `/api/groups/{id}/${path}`,
        tags,
        summary: `Set the group's ${path.replace('-', ' ')} (the group owner or a community admin; a raster image, at most 8 MiB)`,
        middleware: [auth, upload] as const,
        request: { params: uuidParams('id'), body: multipartBody('the image', {}) },
        responses: { 201: ok(Asset, 'set; the previous one is gone'), ...chatErrors(UPLOAD_ERRORS) },
      }),
      async (c) => {
        const row = await setGroupAsset(
          deps,
          { group_id: c.req.valid('param').id, user_id: me(c).user_id, kind },
          () => image(c),
          actorOf(c),
        );
        return c.json(assetView(row), 201);
      },
    );
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}/assets',
      tags,
      summary: "The community's current icon and banner (members)",
      middleware: [auth] as const,
      request: { params: uuidParams('cid') },
      responses: {
        200: ok(z.object({ assets: z.array(Asset) }).openapi('SpaceAssets'), 'current assets'),
        ...chatErrors({ ...AUTH_ERRORS, 403: 'not a member', 404: 'no such community' }),
      },
    }),
    async (c) => {
      const access = await communityFor(deps.db, c.req.valid('param').cid, me(c).user_id);
      return c.json({ assets: (await currentAssets(deps.db, access.community.id)).map(assetView) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/groups/{id}/assets',
      tags,
      summary: "The group's current icon, banner and voice background (those who see the group)",
      middleware: [auth] as const,
      request: { params: uuidParams('id') },
      responses: {
        200: ok(z.object({ assets: z.array(Asset) }), 'current assets'),
        ...chatErrors({ ...AUTH_ERRORS, 403: 'not a member of the community', 404: 'no such group' }),
      },
    }),
    async (c) => {
      const access = await groupFor(deps.db, c.req.valid('param').id, me(c).user_id);
      return c.json({ assets: (await currentAssets(deps.db, access.group.id)).map(assetView) }, 200);
    },
  );

  for (const scope of ['community', 'group'] as const) {
    app.openapi(
      createRoute({
        method: 'get',
        path: `/api/${scope}-assets/{filename}`,
        tags,
        summary: `A ${scope} icon, banner${scope === 'group' ? ' or voice background' : ''} (gated; non-members get the 404 of a missing asset)`,
        middleware: [auth] as const,
        request: { params: FilenameParam },
        responses: {
          ...GATED,
          ...chatErrors({ ...AUTH_ERRORS, 404: 'no such asset, or not for the caller (the same bytes)' }),
        },
      }),
      async (c) =>
        gated(c, async () => {
          const row = await assetByFilename(deps.db, scope, c.req.valid('param').filename);
          return (
            row && {
              community_id: row.community_id,
              group_id: scope === 'group' ? row.space_id : null,
              sha256: row.sha256,
              mime_type: row.mime_type,
              size: row.size,
            }
          );
        }) as never,
    );
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/emojis/{id}',
      tags,
      summary: 'A custom emoji image (gated; non-members get the 404 of a missing emoji)',
      middleware: [auth] as const,
      request: { params: z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' } }) }) },
      responses: {
        ...GATED,
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such emoji, or not for the caller (the same bytes)' }),
      },
    }),
    async (c) =>
      gated(c, async () => {
        const id = c.req.valid('param').id;
        const row = isUuid(id) ? await emojiById(deps.db, id) : null;
        return (
          row && {
            community_id: row.community_id,
            group_id: null,
            sha256: row.sha256,
            mime_type: row.mime_type,
            size: row.size,
          }
        );
      }) as never,
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/communities/{cid}/emojis',
      tags,
      summary: "The community's custom emoji (gated like the images)",
      middleware: [auth] as const,
      request: { params: uuidParams('cid') },
      responses: {
        200: ok(z.object({ emojis: z.array(Emoji) }).openapi('Emojis'), 'by name'),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such community, or not for the caller' }),
      },
    }),
    async (c) => {
      const { cid } = c.req.valid('param');
      try {
        await gate(me(c), cid, null);
        if (!(await communityAccess(deps.db, cid, me(c).user_id))) throw new Hidden();
      } catch (error) {
        if (error instanceof Hidden) return assetNotFound(c) as never;
        throw error;
      }
      return c.json({ emojis: (await communityEmojis(deps.db, cid)).map(emojiView) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/communities/{cid}/emojis',
      tags,
      summary: `Add a custom emoji (owners and admins; name unique, at most ${EMOJI_MAX} per community)`,
      description: 'Multipart: `name` (`^[a-z0-9_]{2,32}$`) and `file` (a raster image, at most 8 MiB).',
      middleware: [auth, upload] as const,
      request: {
        params: uuidParams('cid'),
        body: multipartBody('the image and its name', { name: { type: 'string', pattern: EMOJI_NAME.source } }),
      },
      responses: {
        201: ok(Emoji, 'added'),
        ...chatErrors({
          ...UPLOAD_ERRORS,
          400: 'invalid name, not multipart, or no file part',
          409: 'emoji_name_taken, emoji_limit_reached',
        }),
      },
    }),
    async (c) => {
      const row = await addEmoji(
        deps,
        { community_id: c.req.valid('param').cid, user_id: me(c).user_id },
        () => image(c, ['name']),
        actorOf(c),
      );
      return c.json(emojiView(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/communities/{cid}/emojis/{eid}',
      tags,
      summary: 'Remove a custom emoji (owners and admins)',
      middleware: [auth] as const,
      request: { params: uuidParams('cid', 'eid') },
      responses: {
        204: { description: 'removed' },
        ...chatErrors({ ...AUTH_ERRORS, 403: 'not an owner or admin', 404: 'no such community or emoji' }),
      },
    }),
    async (c) => {
      const { cid, eid } = c.req.valid('param');
      await removeEmoji(deps, { community_id: cid, emoji_id: eid, user_id: me(c).user_id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
