-- Estate ingest throughput: blob content and pending postings are stored without compression
-- (new rows; existing ones stay as they are). pglz cost about as much CPU per ingested chunk as
-- indexing it and saves only disk (this server has no lz4); a chunk's own content and tsvector
-- are stored uncompressed already (007_estate.sql). Pending postings are written once and folded
-- away soon after: compressing them buys nothing.
ALTER TABLE blobs ALTER COLUMN content SET STORAGE EXTERNAL;
ALTER TABLE estate_postings_pending ALTER COLUMN entries SET STORAGE EXTERNAL;

-- Scratch space of the `estate_documents` projection (projections/orchestration/estate.ts): a
-- batch's tsvectors and its postings grouped by bucket are computed on several connections at
-- once (to_tsvector is most of an ingest's CPU, and one transaction runs on one core), then
-- moved into estate_chunks and estate_postings_pending by the batch's own transaction, which
-- deletes them here. Rows are keyed by chunk ordinal, and an ordinal always names the same
-- chunk, so a row left by a batch that rolled back is still true. Unlogged: nothing here needs
-- to survive a crash (the projection computes inline whatever it does not find).
CREATE UNLOGGED TABLE estate_stage_vectors (
  ordinal integer  PRIMARY KEY,
  tsv     tsvector NOT NULL
);
CREATE UNLOGGED TABLE estate_stage_postings (
  first_ordinal integer NOT NULL,
  bucket        integer NOT NULL,
  entries       text    NOT NULL,
  PRIMARY KEY (first_ordinal, bucket)
);
ALTER TABLE estate_stage_vectors ALTER COLUMN tsv SET STORAGE EXTERNAL;
ALTER TABLE estate_stage_postings ALTER COLUMN entries SET STORAGE EXTERNAL;
