// The admin's use cases over files (instance admins and the owner; the routes check who calls):
// delete any file, quarantine and release one, block a content hash (quarantining every stored
// file with that content) and unblock it. The slice's application layer and the only caller of
// the command runner for these routes: each function finds the file or the blocked hash, then
// runs the uploads or blocked-hash decider; refusals come back coded as the files slice answers.

import { randomUUID } from 'node:crypto';
import { blockedHashDecider, uploadsDecider } from '../../../domain/chat/files/decider.ts';
import { blockedHashStream, uploadsStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import {
  blockedHashById,
  fileById,
  filesWithHash,
  type BlockedHashRow,
  type FileRow,
} from '../../../projections/chat/files.ts';
import { isUuid } from '../../shared/params.ts';
import type { ChatDeps } from '../deps.ts';
import { asCoded } from '../files/commands.ts';
import { coded } from '../files/upload.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

const iso = (deps: Deps) => deps.clock.now().toISOString();

/** A stored file, or 404 `file_not_found`. */
export async function storedFile(deps: Pick<ChatDeps, 'db'>, id: string): Promise<FileRow> {
  const row = isUuid(id) ? await fileById(deps.db, id) : null;
  if (!row) throw coded(404, 'file_not_found', 'no such file');
  return row;
}

type FileAction = { type: 'Quarantine'; reason: string | null } | { type: 'Unquarantine' } | { type: 'Delete' };

/** Runs an admin's action on a file, on its uploader's uploads stream. */
async function onFile(
  deps: Deps,
  row: FileRow,
  action: FileAction,
  by: string,
  context: CommandContext,
): Promise<void> {
  const base = { file_id: row.id, uploader_id: row.uploader_id, by, at: iso(deps) };
  const command =
    action.type === 'Delete'
      ? { ...base, type: 'Delete' as const, by_admin: true }
      : action.type === 'Quarantine'
        ? { ...base, type: 'Quarantine' as const, reason: action.reason }
        : { ...base, type: 'Unquarantine' as const };
  try {
    await deps.commands.run(uploadsStream(row.uploader_id), uploadsDecider, command, context);
  } catch (error) {
    throw asCoded(error);
  }
}

/** Delete any file. */
export async function deleteFile(
  deps: Deps,
  input: { file_id: string; by: string },
  context: CommandContext,
): Promise<void> {
  await onFile(deps, await storedFile(deps, input.file_id), { type: 'Delete' }, input.by, context);
}

/** Quarantine a file (every reader gets 404 until it is released); the file as it is then. */
export async function quarantineFile(
  deps: Deps,
  input: { file_id: string; reason: string | null; by: string },
  context: CommandContext,
): Promise<FileRow> {
  const row = await storedFile(deps, input.file_id);
  await onFile(deps, row, { type: 'Quarantine', reason: input.reason }, input.by, context);
  return (await fileById(deps.db, row.id))!;
}

/** Release a quarantined file; the file as it is then. */
export async function unquarantineFile(
  deps: Deps,
  input: { file_id: string; by: string },
  context: CommandContext,
): Promise<FileRow> {
  const row = await storedFile(deps, input.file_id);
  await onFile(deps, row, { type: 'Unquarantine' }, input.by, context);
  return (await fileById(deps.db, row.id))!;
}

/** Block content by its SHA-256 (409 `already_blocked`), then quarantine every stored file with it; the blocked hash and how many files were quarantined. */
export async function blockHash(
  deps: Deps,
  input: { sha256: string; reason?: string | undefined; by: string },
  context: CommandContext,
): Promise<{ blocked: BlockedHashRow; quarantined: number }> {
  const sha256 = input.sha256.toLowerCase();
  const id = randomUUID();
  try {
    await deps.commands.run(
      blockedHashStream(sha256),
      blockedHashDecider,
      { type: 'Block', id, sha256, reason: input.reason ?? null, by: input.by, at: iso(deps) },
      context,
    );
  } catch (error) {
    throw asCoded(error);
  }
  let quarantined = 0;
  for (const row of await filesWithHash(deps.db, sha256)) {
    await onFile(deps, row, { type: 'Quarantine', reason: 'blocked_hash' }, input.by, context);
    quarantined += 1;
  }
  return { blocked: (await blockedHashById(deps.db, id))!, quarantined };
}

/** Unblock a hash (404 `blocked_hash_not_found`); quarantined files stay quarantined until released. */
export async function unblockHash(
  deps: Deps,
  input: { blocked_hash_id: string; by: string },
  context: CommandContext,
): Promise<void> {
  const id = input.blocked_hash_id;
  const row = isUuid(id) ? await blockedHashById(deps.db, id) : null;
  if (!row) throw coded(404, 'blocked_hash_not_found', 'no such blocked hash');
  try {
    await deps.commands.run(
      blockedHashStream(row.sha256),
      blockedHashDecider,
      { type: 'Unblock', by: input.by, at: iso(deps) },
      context,
    );
  } catch (error) {
    throw asCoded(error);
  }
}
