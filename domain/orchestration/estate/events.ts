// The estate slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type RunKind = 'ingest' | 'vault';

export type RunStatus = 'ok' | 'partial' | 'failed';

export interface RunFailure {
  path: string | null;
  error: string;
  message: string;
}

export type EstateDocumentEvent =
  | DomainEvent<
      'EstateDocumentIngested',
      {
        document_id: string;
        run_id: string;
        source_repo: string;
        path: string;
        category: string;
        is_vault: boolean;
        commit_sha: string | null;
        metadata: Record<string, unknown> | null;
        /** The blob holding the content (claim check). */
        content_sha256: string;
        content_chars: number;
        /** Chunk offsets into the content, flat: [start0, end0, start1, end1, ...] (UTF-16 units). */
        chunks: number[];
        chunking: number;
        /** The content this replaces; null when the document is new (or was deleted). */
        previous_content_sha256: string | null;
        at: string;
      }
    >
  | DomainEvent<
      'EstateDocumentDeleted',
      { document_id: string; source_repo: string; path: string; is_vault: boolean; at: string }
    >;

export type IngestRunEvent = DomainEvent<
  'EstateIngestRunRecorded',
  {
    run_id: string;
    kind: RunKind;
    documents_submitted: number;
    documents_succeeded: number;
    documents_failed: number;
    chunks_written: number;
    status: RunStatus;
    errors: RunFailure[];
    started_at: string;
    ended_at: string;
    actor: string;
    actor_id: string | null;
  }
>;

export type EstateEvent = EstateDocumentEvent | IngestRunEvent;

export const ESTATE_DOCUMENT_EVENT_TYPES = eventTypes<EstateDocumentEvent>()([
  'EstateDocumentIngested',
  'EstateDocumentDeleted',
]);

export const INGEST_RUN_EVENT_TYPES = eventTypes<IngestRunEvent>()(['EstateIngestRunRecorded']);

export const ESTATE_EVENT_TYPES = eventTypes<EstateEvent>()([
  'EstateDocumentIngested',
  'EstateDocumentDeleted',
  'EstateIngestRunRecorded',
]);
