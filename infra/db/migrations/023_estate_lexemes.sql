-- Estate lexemes are computed by the service (domain/orchestration/estate/lexemes.ts), not by
-- to_tsvector: the `estate_documents` projection no longer stages tsvectors on other
-- connections, and its tables are rebuilt so every chunk's tsvector, and the search index, follow
-- the one rule (a search computes its lexemes by the same rule). The projection replays the log
-- from the start (it reads the content back from `blobs`, which stay).
DROP TABLE estate_stage_vectors, estate_stage_postings;

TRUNCATE estate_documents, estate_chunks, estate_postings, estate_postings_pending, estate_partitions, estate_counters;
DELETE FROM projection_checkpoints WHERE name = 'estate_documents';

-- Pending postings are binary now (see pendingRows in projections/orchestration/estate-index.ts).
ALTER TABLE estate_postings_pending DROP COLUMN entries;
ALTER TABLE estate_postings_pending ADD COLUMN entries bytea NOT NULL;
ALTER TABLE estate_postings_pending ALTER COLUMN entries SET STORAGE EXTERNAL;

-- Chunks store no tsvector: ranking computes the tsvectors of a search's candidates from their
-- content (projections/orchestration/estate-index.ts, `search`).
ALTER TABLE estate_chunks DROP COLUMN tsv;

-- Searches build their tsquery in the service from the same lexemes: 007's OR aggregate is unused.
DROP AGGREGATE tsquery_or_agg(tsquery);
