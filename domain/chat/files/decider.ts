// Uploaded files. Every file event lives in its uploader's stream (`chat.uploads-<user>`), so
// the upload quota is decided on one stream per user: two racing uploads read the same revision,
// one appends, the other decides again on the new total and is refused. The bytes are not in the
// log: a file names its content-addressed blob by SHA-256 (DESIGN.md "Large payloads").
//
// Blocked content (`chat.blocked_hash-<sha256>`): an admin blocks the SHA-256 of a file's bytes;
// uploads with it are refused (`FileUploadRefused`, an audit fact) and stored files with it are
// quarantined.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { FileFacts, FileEvent, BlockedHashEvent } from './events.ts';

export const FILE_NAME_MAX = 255;

export type FileCommand =
  | ({ type: 'Upload'; quota_bytes: number; at: string } & FileFacts)
  // The others name the uploader: it is the stream's owner, recorded in their events.
  | { type: 'Delete'; file_id: string; uploader_id: string; by: string; by_admin: boolean; at: string }
  | { type: 'Quarantine'; file_id: string; uploader_id: string; by: string; reason: string | null; at: string }
  | { type: 'Unquarantine'; file_id: string; uploader_id: string; by: string; at: string };

export interface UploadsState {
  used: number;
  files: Record<string, { size: number; sha256: string; quarantined: boolean }>;
}

export const fileNotFound = () => new DomainError('not_found', 'file_not_found', 'no such file');

export const uploadsDecider: Decider<UploadsState, FileCommand, FileEvent> = {
  initialState: () => ({ used: 0, files: {} }),
  evolve(state, event) {
    const d = event.data;
    switch (event.type) {
      case 'FileUploaded':
        return {
          used: state.used + event.data.size,
          files: {
            ...state.files,
            [d.file_id]: { size: event.data.size, sha256: event.data.sha256, quarantined: false },
          },
        };
      case 'FileDeleted': {
        const { [d.file_id]: gone, ...files } = state.files;
        return { used: state.used - (gone?.size ?? 0), files };
      }
      case 'FileQuarantined':
      case 'FileUnquarantined': {
        const file = state.files[d.file_id];
        if (!file) return state;
        return {
          ...state,
          files: { ...state.files, [d.file_id]: { ...file, quarantined: event.type === 'FileQuarantined' } },
        };
      }
    }
  },
  decide(command, state) {
    if (command.type === 'Upload') {
      if (state.files[command.file_id]) throw new DomainError('conflict', 'file_exists', 'file already exists');
      if (state.used + command.size > command.quota_bytes) {
        throw new DomainError(
          'conflict',
          'quota_exceeded',
          `the upload quota of ${command.quota_bytes} bytes would be exceeded`,
          { quota_bytes: command.quota_bytes, used_bytes: state.used },
        );
      }
      const { type: _t, quota_bytes: _q, ...data } = command;
      return [{ type: 'FileUploaded', data }];
    }
    const file = state.files[command.file_id];
    if (!file) throw fileNotFound();
    const { uploader_id } = command;
    switch (command.type) {
      case 'Delete':
        return [
          {
            type: 'FileDeleted',
            data: {
              file_id: command.file_id,
              uploader_id,
              size: file.size,
              sha256: file.sha256,
              by: command.by,
              by_admin: command.by_admin,
              at: command.at,
            },
          },
        ];
      case 'Quarantine':
        if (file.quarantined) return [];
        return [
          {
            type: 'FileQuarantined',
            data: { file_id: command.file_id, uploader_id, reason: command.reason, by: command.by, at: command.at },
          },
        ];
      case 'Unquarantine':
        if (!file.quarantined) return [];
        return [
          {
            type: 'FileUnquarantined',
            data: { file_id: command.file_id, uploader_id, by: command.by, at: command.at },
          },
        ];
    }
  },
};

export type BlockedHashCommand =
  | { type: 'Block'; id: string; sha256: string; reason: string | null; by: string; at: string }
  | { type: 'Unblock'; by: string; at: string };

export interface BlockedHashState {
  id: string | null;
  sha256: string | null;
}

export const blockedHashDecider: Decider<BlockedHashState, BlockedHashCommand, BlockedHashEvent> = {
  initialState: () => ({ id: null, sha256: null }),
  evolve(state, event) {
    return event.type === 'HashBlocked' ? { id: event.data.id, sha256: event.data.sha256 } : { id: null, sha256: null };
  },
  decide(command, state) {
    if (command.type === 'Block') {
      if (state.id) throw new DomainError('conflict', 'already_blocked', 'this hash is blocked already');
      const { type: _t, ...data } = command;
      return [{ type: 'HashBlocked', data }];
    }
    if (!state.id) throw new DomainError('not_found', 'blocked_hash_not_found', 'no such blocked hash');
    return [{ type: 'HashUnblocked', data: { id: state.id, sha256: state.sha256!, by: command.by, at: command.at } }];
  },
};
