-- Estate knowledge (projections `estate_documents` and `estate_runs`) and the content-addressed
-- blob store their events point into.

-- Large payloads, content-addressed (DESIGN.md "Shared mechanisms"): events carry the SHA-256 of
-- their content and the content lives here, written before the event (a claim check). A blob is
-- never updated: the key is the hash of the content. Blobs belong with the log, not with a read
-- model: `rebuild` never empties this table, and replaying the log reads from it.
CREATE TABLE blobs (
  sha256     text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  content    text        NOT NULL,
  chars      integer     NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION blobs_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'blobs are content-addressed and never updated (% refused)', TG_OP;
END $$;

CREATE TRIGGER blobs_no_update BEFORE UPDATE ON blobs
  FOR EACH ROW EXECUTE FUNCTION blobs_are_immutable();

-- One row per stored document; the upsert key is (source_repo, path) and the id is derived from
-- it. Vault documents (`source_repo` = 'vault') live here too, flagged `is_vault`.
CREATE TABLE estate_documents (
  id             uuid PRIMARY KEY,
  source_repo    text        NOT NULL,
  path           text        NOT NULL,
  category       text        NOT NULL,
  is_vault       boolean     NOT NULL,
  commit_sha     text,
  metadata       jsonb,
  content_sha256 text        NOT NULL,
  content_chars  integer     NOT NULL,
  chunks         integer     NOT NULL,
  run_id         uuid        NOT NULL,
  ingested_at    timestamptz NOT NULL,
  CONSTRAINT estate_documents_key UNIQUE (source_repo, path)
);
CREATE INDEX estate_documents_category ON estate_documents (is_vault, category);

-- One row per chunk. `is_vault` and `category` are copied from the document (both follow from
-- the document's key, so they never change under it) to filter searches without a join.
-- `tsv` is to_tsvector('english', content), written by the projection.
--
-- Search speed depends on this heap staying narrow: counting every match of a common term
-- visits each heap page holding one, so `content` and `tsv` should live out of line in the
-- TOAST table. PostgreSQL toasts a row only once it is longer than about 2 kB; from there,
-- toast_tuple_target = 128 moves both columns out, leaving rows of about 100 bytes. A chunk
-- is up to 2,000 characters, so most rows are toasted.
CREATE TABLE estate_chunks (
  chunk_id    uuid     NOT NULL,
  document_id uuid     NOT NULL,
  chunk_index integer  NOT NULL,
  is_vault    boolean  NOT NULL,
  category    text     NOT NULL,
  content     text     NOT NULL,
  tsv         tsvector NOT NULL,
  CONSTRAINT estate_chunks_pkey PRIMARY KEY (document_id, chunk_index)
) WITH (toast_tuple_target = 128);
CREATE INDEX estate_chunks_tsv ON estate_chunks USING gin (tsv);

-- OR of a set of tsqueries (`any` searches): built from plainto_tsquery of each word, so user
-- text is never parsed as tsquery syntax.
CREATE AGGREGATE tsquery_or_agg(tsquery) (SFUNC = tsquery_or, STYPE = tsquery);

-- One row per ingest or vault run.
CREATE TABLE estate_runs (
  run_id              uuid PRIMARY KEY,
  kind                text        NOT NULL,
  documents_submitted integer     NOT NULL,
  documents_succeeded integer     NOT NULL,
  documents_failed    integer     NOT NULL,
  chunks_written      integer     NOT NULL,
  status              text        NOT NULL,
  errors              jsonb       NOT NULL,
  started_at          timestamptz NOT NULL,
  ended_at            timestamptz NOT NULL,
  actor               text        NOT NULL,
  actor_id            uuid
);
CREATE INDEX estate_runs_newest ON estate_runs (ended_at DESC, run_id DESC);
CREATE INDEX estate_runs_incomplete ON estate_runs (ended_at DESC, run_id DESC) WHERE status <> 'ok';
