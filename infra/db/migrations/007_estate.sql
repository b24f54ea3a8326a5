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

-- One row per chunk. `ordinal` numbers chunks in the order the projection wrote them (never
-- reused, so a rebuild numbers them alike); the search index below refers to chunks by it.
-- `is_vault` and `category` are copied from the document (both follow from its key, so they
-- never change under it). `tsv` is to_tsvector('english', content), for ranking.
CREATE TABLE estate_chunks (
  chunk_id    uuid     NOT NULL,
  document_id uuid     NOT NULL,
  chunk_index integer  NOT NULL,
  ordinal     integer  NOT NULL,
  is_vault    boolean  NOT NULL,
  category    text     NOT NULL,
  content     text     NOT NULL,
  tsv         tsvector NOT NULL,
  CONSTRAINT estate_chunks_pkey PRIMARY KEY (document_id, chunk_index),
  CONSTRAINT estate_chunks_ordinal UNIQUE (ordinal)
);
-- A chunk's content and tsvector (1-2 kB each) are stored out of line uncompressed: pglz costs
-- more CPU per chunk written than the space it saves is worth, and the rows stay narrow.
ALTER TABLE estate_chunks ALTER COLUMN content SET STORAGE EXTERNAL, ALTER COLUMN tsv SET STORAGE EXTERNAL;

-- The search index (projections/orchestration/estate-postings.ts): for each lexeme, the
-- ordinals of the chunks whose tsvector holds it, in containers of 65,536 ordinals (`hi` =
-- ordinal / 65,536). A deleted chunk's bits stay here; matches are always intersected with a
-- partition, which holds live chunks only.
-- Containers are rewritten in place by every batch that touches them: free space on each page
-- lets most rewrites be HOT (no new index entry); bitmaps (8 kB) are stored out of line without
-- compression, which they would not repay.
CREATE TABLE estate_postings (
  lexeme text    NOT NULL,
  hi     integer NOT NULL,
  data   bytea   NOT NULL,
  PRIMARY KEY (lexeme, hi)
) WITH (fillfactor = 70);
ALTER TABLE estate_postings ALTER COLUMN data SET STORAGE EXTERNAL;

-- Live chunks by partition: `estate`, `vault`, and `c:<category>` (estate chunks of a category).
CREATE TABLE estate_partitions (
  partition text    NOT NULL,
  hi        integer NOT NULL,
  data      bytea   NOT NULL,
  PRIMARY KEY (partition, hi)
);

-- The next chunk ordinal.
CREATE TABLE estate_counters (
  name  text PRIMARY KEY,
  value bigint NOT NULL
);

-- OR of a set of tsqueries (ranking `any` searches): built from plainto_tsquery of each word,
-- so user text is never parsed as tsquery syntax.
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
