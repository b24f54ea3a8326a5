// Files' use cases: store an upload (its channel, blocked content, the type from the bytes, then
// the uploader's stream decides the quota) and delete a file (its uploader). The slice's
// application layer and the only caller of the command runner for these routes; the multipart
// body is read by the route (./upload.ts), and a received upload that is not stored is discarded
// here.

import { randomUUID } from 'node:crypto';
import { uploadsDecider } from '../../../domain/chat/files/decider.ts';
import type { UploadRefusedEvent } from '../../../domain/chat/files/events.ts';
import { uploadRefusalStream, uploadsStream } from '../../../domain/chat/streams.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { fileById, isBlocked, type FileRow } from '../../../projections/chat/files.ts';
import { STATUS_OF } from '../../shared/http-errors.ts';
import { isUuid } from '../../shared/params.ts';
import { memberChannel } from '../access.ts';
import type { ChatDeps } from '../deps.ts';
import { coded, sniff, type Upload } from './upload.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'files'>;

/** A domain refusal as the chat body with its `code` (quota 413). */
export function asCoded(error: unknown): unknown {
  if (!(error instanceof DomainError)) return error;
  const status = error.code === 'quota_exceeded' ? 413 : STATUS_OF[error.kind];
  return coded(status, error.code, error.message, error.details);
}

const fileNotFound = () => coded(404, 'file_not_found', 'no such file');

/** A live file the caller may read: the uploader, a member of its channel, anyone for a file without one (404 otherwise, quarantined included). Reads use it too. */
export async function readableFile(db: Pool, id: string, userId: string): Promise<FileRow> {
  const file = await fileById(db, id);
  if (!file || file.quarantined) throw fileNotFound();
  if (file.uploader_id === userId || !file.channel_id) return file;
  try {
    await memberChannel(db, file.channel_id, userId);
  } catch {
    throw fileNotFound();
  }
  return file;
}

export interface StoreUpload {
  user_id: string;
  upload: Upload;
  quota_bytes: number;
}

/**
 * Stores a received upload for its uploader: `channel_id` (a field of the upload) names a channel
 * the uploader is a member of; blocked content is refused (422, the refusal recorded); the blob
 * is committed and the upload decided on the uploader's stream (quota 413). Discards the received
 * bytes unless committed.
 */
export async function storeUpload(deps: Deps, input: StoreUpload, context: CommandContext): Promise<FileRow> {
  const { file } = input.upload;
  let committed = false;
  try {
    const channelId = input.upload.fields.channel_id?.trim() || null;
    if (channelId) {
      if (!isUuid(channelId)) throw coded(400, 'validation_failed', 'channel_id: not a UUID');
      await memberChannel(deps.db, channelId, input.user_id);
    }
    if (await isBlocked(deps.db, file.sha256)) {
      const event: UploadRefusedEvent = {
        type: 'FileUploadRefused',
        data: {
          user_id: input.user_id,
          sha256: file.sha256,
          name: file.name,
          size: file.size,
          channel_id: channelId,
          reason: 'blocked_content',
          at: deps.clock.now().toISOString(),
        },
      };
      await deps.commands.record(uploadRefusalStream(randomUUID()), event, context);
      throw coded(422, 'blocked_content', 'this content is blocked on this server');
    }
    const { mime } = await sniff(file.head);
    await deps.files.commit(file);
    committed = true;
    const id = randomUUID();
    try {
      await deps.commands.run(
        uploadsStream(input.user_id),
        uploadsDecider,
        {
          type: 'Upload',
          file_id: id,
          name: file.name,
          size: file.size,
          mime_type: mime,
          sha256: file.sha256,
          channel_id: channelId,
          uploader_id: input.user_id,
          quota_bytes: input.quota_bytes,
          at: deps.clock.now().toISOString(),
        },
        context,
      );
    } catch (error) {
      throw asCoded(error);
    }
    return (await fileById(deps.db, id))!;
  } finally {
    if (!committed) await deps.files.discard(file);
  }
}

/** Deletes a file: its uploader only (403 for another reader, 404 for anyone else). */
export async function deleteFile(
  deps: Deps,
  input: { file_id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  const file = await readableFile(deps.db, input.file_id, input.user_id);
  if (file.uploader_id !== input.user_id) throw coded(403, 'forbidden', 'only the uploader deletes a file');
  try {
    await deps.commands.run(
      uploadsStream(input.user_id),
      uploadsDecider,
      {
        type: 'Delete',
        file_id: file.id,
        uploader_id: input.user_id,
        by: input.user_id,
        by_admin: false,
        at: deps.clock.now().toISOString(),
      },
      context,
    );
  } catch (error) {
    throw asCoded(error);
  }
}
