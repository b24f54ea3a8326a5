// Files: POST /api/files/upload (multipart, streamed: ./upload.ts), GET /api/files/{id}/meta,
// GET /api/files/{id} (./serve.ts: ETag, Range, nosniff, CSP sandbox, private caching,
// attachment except raster images, audio and video), DELETE /api/files/{id} (the uploader).
//
// Readers: the uploader, and the members of the file's channel; a file uploaded without a
// channel is readable by any signed-in holder of its id. Anyone else, and every reader of a
// quarantined file (or one whose content is blocked), gets 404.
//
// Limits: the file CHATSVC_MAX_UPLOAD_MB (413 `file_too_large`), the body 10 MiB more (413,
// before reading when Content-Length says so), the per-user quota CHATSVC_UPLOAD_QUOTA_MB (413
// `quota_exceeded`), decided on the uploader's one stream (domain/chat/files/decider.ts).

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { usedBytes, type FileRow } from '../../../projections/chat/files.ts';
import { ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { bodyLimit } from '../../shared/route-policy.ts';
import { actorOf, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { deleteFile, readableFile, storeUpload } from './commands.ts';
import { blobResponses, serveBlob } from './serve.ts';
import { coded, inlineType, multipartBody, receiveUpload } from './upload.ts';

const tags = ['files'];
const MiB = 1024 * 1024;
/** The request body may carry this much beside the file (the spec's 110 MB body for a 100 MB file). */
export const UPLOAD_BODY_OVERHEAD = 10 * MiB;
export const UPLOAD_PATH = '/api/files/upload';

export const FileMeta = z
  .object({
    id: z.uuid(),
    name: z.string(),
    size: z.number().int(),
    mime_type: z.string(),
    sha256: z.string(),
    channel_id: z.uuid().nullable(),
    uploader_id: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .openapi('FileMeta');

export const fileMeta = (f: FileRow) => ({
  id: f.id,
  name: f.name,
  size: f.size,
  mime_type: f.mime_type,
  sha256: f.sha256,
  channel_id: f.channel_id,
  uploader_id: f.uploader_id,
  created_at: f.created_at.toISOString(),
});

const IdParam = uuidParams('id');

export function fileRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const auth = requireChatUser(deps);
  const { maxUploadBytes, quotaBytes } = deps.config.files;
  const me = (c: Context<ChatEnv>) => c.get('chatUser');

  app.openapi(
    createRoute({
      method: 'post',
      path: UPLOAD_PATH,
      tags,
      summary: 'Upload a file (multipart: one file part, optional channel_id of a channel the caller is a member of)',
      description:
        `Streamed to disk through SHA-256, never buffered; identical content is stored once. The file at most ${maxUploadBytes} bytes (413 \`file_too_large\`), ` +
        `the body at most ${maxUploadBytes + UPLOAD_BODY_OVERHEAD} bytes (413), the caller's stored files at most ${quotaBytes} bytes (413 \`quota_exceeded\`). ` +
        'The MIME type comes from the bytes. Blocked content: 422 `blocked_content`.',
      middleware: [auth, bodyLimit(maxUploadBytes + UPLOAD_BODY_OVERHEAD, { streamed: true })] as const,
      request: {
        body: multipartBody('the file, and optionally the channel it is shared in', {
          channel_id: { type: 'string', format: 'uuid' },
        }),
      },
      responses: {
        201: ok(FileMeta, 'stored'),
        ...chatErrors({
          ...AUTH_ERRORS,
          400: 'not multipart, no file part, or a malformed channel_id',
          403: 'not a member of channel_id',
          404: 'no such channel',
          413: 'file, body or quota too large',
          422: 'blocked_content',
        }),
      },
    }),
    async (c) => {
      const user = me(c);
      const used = await usedBytes(deps.db, user.user_id);
      const room = Math.max(0, quotaBytes - used);
      const limit = Math.min(maxUploadBytes, room);
      const upload = await receiveUpload(c, deps.files, {
        maxFileBytes: limit,
        maxBodyBytes: maxUploadBytes + UPLOAD_BODY_OVERHEAD,
        fields: ['channel_id'],
        tooLarge: () =>
          room < maxUploadBytes
            ? coded(413, 'quota_exceeded', `the upload quota of ${quotaBytes} bytes would be exceeded`, {
                quota_bytes: quotaBytes,
                used_bytes: used,
              })
            : coded(413, 'file_too_large', `a file is at most ${maxUploadBytes} bytes`, {
                limit_bytes: maxUploadBytes,
              }),
      });
      const row = await storeUpload(deps, { user_id: user.user_id, upload, quota_bytes: quotaBytes }, actorOf(c));
      return c.json(fileMeta(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/files/{id}/meta',
      tags,
      summary: "A file's metadata (its readers)",
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        200: ok(FileMeta, 'the file'),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such file, not readable by the caller, or quarantined' }),
      },
    }),
    async (c) => c.json(fileMeta(await readableFile(deps.db, c.req.valid('param').id, me(c).user_id)), 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/files/{id}',
      tags,
      summary: 'Download a file (its readers); ETag, Range',
      description:
        'Headers: `ETag` (the SHA-256), `Accept-Ranges`, `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox`, `Cache-Control: private`, ' +
        '`Content-Disposition` inline for raster images, audio and video, attachment otherwise. `If-None-Match` answers 304; one `Range` answers 206 (416 when unsatisfiable).',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        // Served as the type sniffed at upload: any type.
        ...blobResponses('the bytes, as their stored type', ['*/*']),
        ...chatErrors({ ...AUTH_ERRORS, 404: 'no such file, not readable by the caller, or quarantined' }),
      },
    }),
    async (c) => {
      const file = await readableFile(deps.db, c.req.valid('param').id, me(c).user_id);
      return serveBlob(c, deps.files, {
        sha256: file.sha256,
        size: file.size,
        mime_type: file.mime_type,
        name: file.name,
        inline: inlineType(file.mime_type),
      }) as never;
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/files/{id}',
      tags,
      summary: 'Delete a file (its uploader)',
      middleware: [auth] as const,
      request: { params: IdParam },
      responses: {
        204: { description: 'deleted' },
        ...chatErrors({
          ...AUTH_ERRORS,
          403: 'a reader who is not the uploader',
          404: 'no such file, or not readable by the caller',
        }),
      },
    }),
    async (c) => {
      await deleteFile(deps, { file_id: c.req.valid('param').id, user_id: me(c).user_id }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
