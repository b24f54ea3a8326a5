// The files slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type FileFacts = {
  file_id: string;
  name: string;
  size: number;
  mime_type: string;
  sha256: string;
  channel_id: string | null;
  uploader_id: string;
};

export type FileEvent =
  | DomainEvent<'FileUploaded', FileFacts & { at: string }>
  | DomainEvent<
      'FileDeleted',
      { file_id: string; uploader_id: string; size: number; sha256: string; by: string; by_admin: boolean; at: string }
    >
  | DomainEvent<
      'FileQuarantined',
      { file_id: string; uploader_id: string; reason: string | null; by: string; at: string }
    >
  | DomainEvent<'FileUnquarantined', { file_id: string; uploader_id: string; by: string; at: string }>;

export const FILE_EVENT_TYPES = eventTypes<FileEvent>()([
  'FileUploaded',
  'FileDeleted',
  'FileQuarantined',
  'FileUnquarantined',
]);

// Blocked hashes.

export type BlockedHashEvent =
  | DomainEvent<'HashBlocked', { id: string; sha256: string; reason: string | null; by: string; at: string }>
  | DomainEvent<'HashUnblocked', { id: string; sha256: string; by: string; at: string }>;

export const BLOCKED_HASH_EVENT_TYPES = eventTypes<BlockedHashEvent>()(['HashBlocked', 'HashUnblocked']);

/** An upload refused for its content: an audit fact, no decision (nothing was stored). */
export type UploadRefusedEvent = DomainEvent<
  'FileUploadRefused',
  {
    user_id: string;
    sha256: string;
    name: string;
    size: number;
    channel_id: string | null;
    reason: 'blocked_content';
    at: string;
  }
>;

export const UPLOAD_REFUSED_EVENT_TYPES = eventTypes<UploadRefusedEvent>()(['FileUploadRefused']);
