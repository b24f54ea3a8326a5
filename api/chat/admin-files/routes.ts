// The admin surface over files (instance `is_admin` or `is_owner`): GET /api/admin/files (paged,
// newest first), GET /api/admin/storage-stats, DELETE /api/admin/files/{id}, POST
// /api/admin/files/{id}/quarantine and /unquarantine, and blocked content hashes (GET/POST
// /api/admin/blocked-hashes, DELETE /api/admin/blocked-hashes/{id}). Blocking a hash
// quarantines every stored file with that content (one FileQuarantined per file, reason
// `blocked_hash`), and uploads of it are refused (422 `blocked_content`).

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import {
  blockedHashes,
  listFiles,
  storageStats,
  type BlockedHashRow,
  type FileRow,
} from '../../../projections/chat/files.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { uuidParams } from '../../shared/params.ts';
import { actorOf, requireChatAdmin, requireChatUser, type ChatEnv } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';
import { fileMeta, FileMeta } from '../files/routes.ts';
import { AUTH_ERRORS, chatErrors, chatRouter } from '../router.ts';
import { blockHash, deleteFile, quarantineFile, unblockHash, unquarantineFile } from './commands.ts';

const tags = ['admin'];
const ADMIN_ERRORS = { ...AUTH_ERRORS, 403: 'instance admin or owner required' };
const AdminFile = FileMeta.extend({ quarantined: z.boolean(), quarantine_reason: z.string().nullable() }).openapi(
  'AdminFile',
);
const adminFile = (f: FileRow) => ({
  ...fileMeta(f),
  quarantined: f.quarantined,
  quarantine_reason: f.quarantine_reason,
});
const BlockedHash = z
  .object({
    id: z.uuid(),
    sha256: z.string(),
    reason: z.string().nullable(),
    created_by: z.uuid(),
    created_at: z.iso.datetime(),
  })
  .openapi('BlockedHash');
const blockedView = (b: BlockedHashRow) => ({
  id: b.id,
  sha256: b.sha256,
  reason: b.reason,
  created_by: b.created_by,
  created_at: b.created_at.toISOString(),
});
const IdParam = uuidParams('id');
const PAGE_DEFAULT = 50;
const PAGE_MAX = 200;

export function adminFileRoutes(deps: ChatDeps) {
  const app = chatRouter();
  const guard = [requireChatUser(deps), requireChatAdmin()];
  const admin = (c: Context<ChatEnv>) => c.get('chatUser').user_id;

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/files',
      tags,
      summary: 'Every stored file, newest first',
      middleware: guard,
      request: {
        query: z.object({
          limit: z.coerce
            .number()
            .int()
            .catch(PAGE_DEFAULT)
            .transform((n) => Math.min(PAGE_MAX, Math.max(1, n)))
            .default(PAGE_DEFAULT)
            .openapi({ type: 'integer', description: `default ${PAGE_DEFAULT}, clamped to 1-${PAGE_MAX}` }),
          offset: z.coerce
            .number()
            .int()
            .catch(0)
            .transform((n) => Math.max(0, n))
            .default(0)
            .openapi({ type: 'integer' }),
          uploader_id: z.uuid().optional(),
          quarantined: z.enum(['true', 'false']).optional(),
        }),
      },
      responses: {
        200: ok(
          z
            .object({
              files: z.array(AdminFile),
              total: z.number().int(),
              limit: z.number().int(),
              offset: z.number().int(),
            })
            .openapi('AdminFilePage'),
          'a page',
        ),
        ...chatErrors({ ...ADMIN_ERRORS, 400: 'validation error' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const page = await listFiles(deps.db, {
        uploader_id: q.uploader_id ?? null,
        quarantined: q.quarantined === undefined ? null : q.quarantined === 'true',
        limit: q.limit,
        offset: q.offset,
      });
      return c.json({ files: page.files.map(adminFile), total: page.total, limit: q.limit, offset: q.offset }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/storage-stats',
      tags,
      summary: 'What the stored files hold',
      middleware: guard,
      responses: {
        200: ok(
          z
            .object({
              file_count: z.number().int(),
              total_bytes: z.number().int().openapi({ description: "sum of live files' sizes" }),
              blob_count: z.number().int(),
              blob_bytes: z
                .number()
                .int()
                .openapi({ description: 'bytes on disk for them: identical content is stored once' }),
              quarantined_count: z.number().int(),
              blocked_hash_count: z.number().int(),
              uploader_count: z.number().int(),
              max_upload_bytes: z.number().int(),
              quota_bytes: z.number().int(),
            })
            .openapi('StorageStats'),
          'totals',
        ),
        ...chatErrors(ADMIN_ERRORS),
      },
    }),
    async (c) =>
      c.json(
        {
          ...(await storageStats(deps.db)),
          max_upload_bytes: deps.config.files.maxUploadBytes,
          quota_bytes: deps.config.files.quotaBytes,
        },
        200,
      ),
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/admin/files/{id}',
      tags,
      summary: 'Delete any file',
      middleware: guard,
      request: { params: IdParam },
      responses: { 204: { description: 'deleted' }, ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such file' }) },
    }),
    async (c) => {
      await deleteFile(deps, { file_id: c.req.valid('param').id, by: admin(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/files/{id}/quarantine',
      tags,
      summary: 'Quarantine a file: every reader gets 404 until it is released',
      middleware: guard,
      request: {
        params: IdParam,
        body: {
          required: false,
          content: {
            'application/json': {
              schema: z.strictObject({ reason: z.string().max(500).optional() }).openapi('QuarantineFile'),
            },
          },
        },
      },
      responses: {
        200: ok(AdminFile, 'the file'),
        ...chatErrors({ ...ADMIN_ERRORS, 400: 'validation error', 404: 'no such file' }),
      },
    }),
    async (c) => {
      const body = /json/i.test(c.req.header('content-type') ?? '') ? c.req.valid('json') : {};
      return c.json(
        adminFile(
          await quarantineFile(
            deps,
            { file_id: c.req.valid('param').id, reason: body.reason ?? null, by: admin(c) },
            actorOf(c),
          ),
        ),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/files/{id}/unquarantine',
      tags,
      summary: 'Release a quarantined file (content whose hash is blocked stays unreadable)',
      middleware: guard,
      request: { params: IdParam },
      responses: { 200: ok(AdminFile, 'the file'), ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such file' }) },
    }),
    async (c) => {
      return c.json(
        adminFile(await unquarantineFile(deps, { file_id: c.req.valid('param').id, by: admin(c) }, actorOf(c))),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/admin/blocked-hashes',
      tags,
      summary: 'Blocked content hashes, newest first',
      middleware: guard,
      responses: {
        200: ok(z.object({ blocked_hashes: z.array(BlockedHash) }).openapi('BlockedHashes'), 'the list'),
        ...chatErrors(ADMIN_ERRORS),
      },
    }),
    async (c) => c.json({ blocked_hashes: (await blockedHashes(deps.db)).map(blockedView) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/admin/blocked-hashes',
      tags,
      summary: 'Block content by the SHA-256 of its bytes; stored files with it are quarantined',
      middleware: guard,
      request: {
        body: jsonBody(
          z
            .strictObject({
              sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'sha256: 64 hex characters'),
              reason: z.string().max(500).optional(),
            })
            .openapi('BlockHash'),
        ),
      },
      responses: {
        201: ok(BlockedHash.extend({ quarantined_files: z.number().int() }).openapi('BlockedHashCreated'), 'blocked'),
        ...chatErrors({ ...ADMIN_ERRORS, 400: 'validation error', 409: 'already_blocked' }),
      },
    }),
    async (c) => {
      const { blocked, quarantined } = await blockHash(deps, { ...c.req.valid('json'), by: admin(c) }, actorOf(c));
      return c.json({ ...blockedView(blocked), quarantined_files: quarantined }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/admin/blocked-hashes/{id}',
      tags,
      summary: 'Unblock a hash (quarantined files stay quarantined until released)',
      middleware: guard,
      request: { params: IdParam },
      responses: { 204: { description: 'unblocked' }, ...chatErrors({ ...ADMIN_ERRORS, 404: 'no such blocked hash' }) },
    }),
    async (c) => {
      await unblockHash(deps, { blocked_hash_id: c.req.valid('param').id, by: admin(c) }, actorOf(c));
      return c.body(null, 204);
    },
  );

  return app;
}
