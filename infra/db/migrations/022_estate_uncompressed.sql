-- Estate ingest throughput: blob content and pending postings are stored without compression
-- (new rows; existing ones stay as they are). pglz cost about as much CPU per ingested chunk as
-- indexing it and saves only disk (this server has no lz4); a chunk's own content and tsvector
-- are stored uncompressed already (007_estate.sql). Pending postings are written once and folded
-- away soon after: compressing them buys nothing.
ALTER TABLE blobs ALTER COLUMN content SET STORAGE EXTERNAL;
ALTER TABLE estate_postings_pending ALTER COLUMN entries SET STORAGE EXTERNAL;
