// The uploads and blocked-hash deciders, given/when/then: the quota decided on the uploader's
// one stream, delete and (un)quarantine of a known file, and blocking a content hash once.

import { suite } from 'uvu';
import { blockedHashDecider, uploadsDecider } from '../../../domain/chat/files/decider.ts';
import type { BlockedHashEvent, FileEvent, FileFacts } from '../../../domain/chat/files/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const facts = (file_id: string, size: number): FileFacts => ({
  file_id,
  name: `${file_id}.png`,
  size,
  mime_type: 'image/png',
  sha256: 'a'.repeat(64),
  channel_id: null,
  uploader_id: 'u1',
});
const uploaded = (file_id: string, size: number): FileEvent => ({
  type: 'FileUploaded',
  data: { ...facts(file_id, size), at },
});
const uploads = spec(uploadsDecider);
const test = suite('domain: chat files and blocked hashes');

test('Upload: within the quota counting every stored file; quota_exceeded past it; file_exists for a known id', () => {
  uploads([uploaded('f1', 60)])
    .when({ type: 'Upload', quota_bytes: 100, at, ...facts('f2', 40) })
    .then([uploaded('f2', 40)]);
  uploads([uploaded('f1', 60)])
    .when({ type: 'Upload', quota_bytes: 100, at, ...facts('f2', 41) })
    .thenError('quota_exceeded');
  uploads([uploaded('f1', 60)])
    .when({ type: 'Upload', quota_bytes: 100, at, ...facts('f1', 1) })
    .thenError('file_exists');
  // A deleted file frees its bytes.
  const deleted: FileEvent = {
    type: 'FileDeleted',
    data: { file_id: 'f1', uploader_id: 'u1', size: 60, sha256: 'a'.repeat(64), by: 'u1', by_admin: false, at },
  };
  uploads([uploaded('f1', 60), deleted])
    .when({ type: 'Upload', quota_bytes: 100, at, ...facts('f2', 100) })
    .then([uploaded('f2', 100)]);
});

test('Delete, Quarantine and Unquarantine: a known file; the quarantine flag changes once; file_not_found otherwise', () => {
  const stored = [uploaded('f1', 10)];
  uploads(stored)
    .when({ type: 'Delete', file_id: 'f1', uploader_id: 'u1', by: 'admin', by_admin: true, at })
    .then([
      {
        type: 'FileDeleted',
        data: { file_id: 'f1', uploader_id: 'u1', size: 10, sha256: 'a'.repeat(64), by: 'admin', by_admin: true, at },
      },
    ]);
  const quarantined: FileEvent = {
    type: 'FileQuarantined',
    data: { file_id: 'f1', uploader_id: 'u1', reason: 'blocked', by: 'admin', at },
  };
  uploads(stored)
    .when({ type: 'Quarantine', file_id: 'f1', uploader_id: 'u1', by: 'admin', reason: 'blocked', at })
    .then([quarantined]);
  uploads([...stored, quarantined])
    .when({ type: 'Quarantine', file_id: 'f1', uploader_id: 'u1', by: 'admin', reason: 'blocked', at })
    .then([]);
  uploads([...stored, quarantined])
    .when({ type: 'Unquarantine', file_id: 'f1', uploader_id: 'u1', by: 'admin', at })
    .then([{ type: 'FileUnquarantined', data: { file_id: 'f1', uploader_id: 'u1', by: 'admin', at } }]);
  uploads(stored).when({ type: 'Unquarantine', file_id: 'f1', uploader_id: 'u1', by: 'admin', at }).then([]);
  uploads(stored)
    .when({ type: 'Delete', file_id: 'f9', uploader_id: 'u1', by: 'u1', by_admin: false, at })
    .thenError('file_not_found');
  uploads([])
    .when({ type: 'Quarantine', file_id: 'f1', uploader_id: 'u1', by: 'admin', reason: null, at })
    .thenError('file_not_found');
});

test('Block a hash once (already_blocked); Unblock a blocked hash (blocked_hash_not_found otherwise); block again after', () => {
  const blocked = spec(blockedHashDecider);
  const sha256 = 'b'.repeat(64);
  const block = { type: 'Block' as const, id: 'h1', sha256, reason: null, by: 'admin', at };
  const hashBlocked: BlockedHashEvent = {
    type: 'HashBlocked',
    data: { id: 'h1', sha256, reason: null, by: 'admin', at },
  };
  const unblocked: BlockedHashEvent = { type: 'HashUnblocked', data: { id: 'h1', sha256, by: 'admin', at } };
  blocked([]).when(block).then([hashBlocked]);
  blocked([hashBlocked]).when(block).thenError('already_blocked');
  blocked([hashBlocked]).when({ type: 'Unblock', by: 'admin', at }).then([unblocked]);
  blocked([]).when({ type: 'Unblock', by: 'admin', at }).thenError('blocked_hash_not_found');
  blocked([hashBlocked, unblocked]).when({ type: 'Unblock', by: 'admin', at }).thenError('blocked_hash_not_found');
  blocked([hashBlocked, unblocked]).when(block).then([hashBlocked]);
});

test.run();
