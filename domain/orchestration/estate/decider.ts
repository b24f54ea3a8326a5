// Estate knowledge: documents (`orch.estate_document-<uuid>`) and ingest runs (`orch.estate_run-<uuid>`).
//
// A document's id is derived from its upsert key (source_repo, path), so the key needs no
// reservation stream: the same key always lands on the same stream, and two writers racing on
// it meet at the stream's expected revision. A document deleted and ingested again keeps its id.
//
// Content never enters the log: the events carry its SHA-256 (the key of a content-addressed,
// never-updated blob written before the event, a claim check) and the chunk offsets, so every
// event stays far below 1 MB and a rebuild cuts the same chunks even if the chunking rule changes.

import { createHash } from 'node:crypto';
import { DomainError, type Decider } from '../../shared/decider.ts';
import type { RunStatus, EstateDocumentEvent, IngestRunEvent } from './events.ts';

export const VAULT_REPO = 'vault';
export const MAX_DOCUMENTS_PER_BATCH = 500;

/** The one not-found of an estate document, here and in the slice's commands. */
export const documentNotFound = () => new DomainError('not_found', 'document_not_found', 'no such document');
export const MAX_CONTENT_CHARS = 500_000;
export const MAX_PATH_CHARS = 1024;
export const MAX_SOURCE_REPO_CHARS = 200;
export const MAX_COMMIT_SHA_CHARS = 128;
/** Serialized JSON characters of a document's `metadata`. */
export const MAX_METADATA_CHARS = 16_384;

// --- keys and checks (pure) ----------------------------------------------------------------

/** The document id of an upsert key: a UUID (version 8, name-based) from SHA-256 of the key. */
export function documentIdOf(sourceRepo: string, path: string): string {
  const hash = createHash('sha256')
    .update(`estate-document${JSON.stringify([sourceRepo, path])}`)
    .digest();
  hash[6] = (hash[6]! & 0x0f) | 0x80;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const categoryOf = (path: string): string => path.split('/')[0]!;

// Control characters (C0, DEL, C1): a path or a repository name is one line of printable text.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// Half of a surrogate pair alone is no character (PostgreSQL would store U+FFFD instead).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why a path cannot be stored, or null: a relative path of non-empty segments separated by `/`,
 * with no `.` or `..` segment, no backslash, no control character, at most MAX_PATH_CHARS.
 */
export function pathProblem(path: string): string | null {
  if (path.length === 0) return 'path is empty';
  if (path.length > MAX_PATH_CHARS) return `path is longer than ${MAX_PATH_CHARS} characters`;
  if (CONTROL.test(path)) return 'path contains a control character';
  if (LONE_SURROGATE.test(path)) return 'path contains an unpaired surrogate';
  if (path.includes('\\')) return 'path contains a backslash; use /';
  if (path.startsWith('/')) return 'path must be relative (no leading /)';
  const segments = path.split('/');
  if (segments.some((s) => s.length === 0)) return 'path has an empty segment';
  if (segments.some((s) => s === '.' || s === '..')) return 'path has a . or .. segment';
  if (segments.some((s) => s.trim() !== s)) return 'path segments must not start or end with whitespace';
  return null;
}

export function sourceRepoProblem(sourceRepo: string): string | null {
  if (sourceRepo.trim().length === 0) return 'source_repo is empty';
  if (sourceRepo.length > MAX_SOURCE_REPO_CHARS)
    return `source_repo is longer than ${MAX_SOURCE_REPO_CHARS} characters`;
  if (CONTROL.test(sourceRepo)) return 'source_repo contains a control character';
  if (LONE_SURROGATE.test(sourceRepo)) return 'source_repo contains an unpaired surrogate';
  return null;
}

/** `vault` (in any case) is reserved for the customer vault, written only through the vault route. */
export const isReservedRepo = (sourceRepo: string) => sourceRepo.trim().toLowerCase() === VAULT_REPO;

/** `ok` when nothing failed, `failed` when nothing was stored, `partial` otherwise. */
export function runStatus(stored: number, failed: number): RunStatus {
  if (failed === 0) return 'ok';
  return stored === 0 ? 'failed' : 'partial';
}

// --- the document aggregate ----------------------------------------------------------------

export type EstateDocumentCommand =
  | {
      type: 'IngestDocument';
      document_id: string;
      run_id: string;
      source_repo: string;
      path: string;
      is_vault: boolean;
      commit_sha: string | null;
      metadata: Record<string, unknown> | null;
      content_sha256: string;
      content_chars: number;
      chunks: number[];
      at: string;
    }
  | { type: 'DeleteDocument'; at: string };

export interface EstateDocumentState {
  exists: boolean;
  document_id: string | null;
  source_repo: string | null;
  path: string | null;
  is_vault: boolean;
  content_sha256: string | null;
}

const initialDocument = (): EstateDocumentState => ({
  exists: false,
  document_id: null,
  source_repo: null,
  path: null,
  is_vault: false,
  content_sha256: null,
});

function evolveDocument(state: EstateDocumentState, event: EstateDocumentEvent): EstateDocumentState {
  switch (event.type) {
    case 'EstateDocumentIngested': {
      const d = event.data;
      return {
        exists: true,
        document_id: d.document_id,
        source_repo: d.source_repo,
        path: d.path,
        is_vault: d.is_vault,
        content_sha256: d.content_sha256,
      };
    }
    case 'EstateDocumentDeleted':
      return { ...state, exists: false, content_sha256: null };
  }
}

function decideDocument(command: EstateDocumentCommand, state: EstateDocumentState): EstateDocumentEvent[] {
  switch (command.type) {
    case 'IngestDocument': {
      const { type: _type, ...c } = command;
      if (documentIdOf(c.source_repo, c.path) !== c.document_id)
        throw new DomainError(
          'invalid',
          'document_id_mismatch',
          'the document id does not belong to this source_repo and path',
        );
      if (c.chunks.length === 0 || c.chunks.length % 2 !== 0)
        throw new DomainError('invalid', 'empty_content', 'a document needs at least one chunk');
      // Unchanged content writes nothing (the API reports `unchanged`).
      if (state.exists && state.content_sha256 === c.content_sha256) return [];
      return [
        {
          type: 'EstateDocumentIngested',
          data: {
            document_id: c.document_id,
            run_id: c.run_id,
            source_repo: c.source_repo,
            path: c.path,
            category: categoryOf(c.path),
            is_vault: c.is_vault,
            commit_sha: c.commit_sha,
            metadata: c.metadata,
            content_sha256: c.content_sha256,
            content_chars: c.content_chars,
            chunks: c.chunks,
            chunking: 1,
            previous_content_sha256: state.exists ? state.content_sha256 : null,
            at: c.at,
          },
        },
      ];
    }
    case 'DeleteDocument':
      if (!state.exists || !state.document_id) throw documentNotFound();
      return [
        {
          type: 'EstateDocumentDeleted',
          data: {
            document_id: state.document_id,
            source_repo: state.source_repo!,
            path: state.path!,
            is_vault: state.is_vault,
            at: command.at,
          },
        },
      ];
  }
}

export const estateDocumentDecider: Decider<EstateDocumentState, EstateDocumentCommand, EstateDocumentEvent> = {
  initialState: initialDocument,
  evolve: evolveDocument,
  decide: decideDocument,
};

// --- the ingest run ------------------------------------------------------------------------

export type IngestRunCommand = { type: 'RecordIngestRun' } & IngestRunEvent['data'];

export const ingestRunDecider: Decider<{ recorded: boolean }, IngestRunCommand, IngestRunEvent> = {
  initialState: () => ({ recorded: false }),
  evolve: () => ({ recorded: true }),
  decide(command, state) {
    // A retried request re-records nothing: a run is recorded once.
    if (state.recorded) return [];
    const { type: _type, ...data } = command;
    if (data.documents_succeeded + data.documents_failed !== data.documents_submitted) {
      throw new DomainError('invalid', 'run_counts_mismatch', 'succeeded + failed must equal submitted');
    }
    if (data.status !== runStatus(data.documents_succeeded, data.documents_failed)) {
      throw new DomainError('invalid', 'run_status_mismatch', 'the status does not follow from the counts');
    }
    return [{ type: 'EstateIngestRunRecorded', data }];
  },
};
