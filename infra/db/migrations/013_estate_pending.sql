-- Pending postings of the estate search index (projections/orchestration/estate-index.ts): a
-- projection flush appends, per bucket of lexemes (the first byte of the lexeme's SHA-256), the
-- lexemes it indexed with their chunk ordinals, as JSON `[[lexeme, [ordinal, ...]], ...]`; later
-- flushes fold a bucket's rows into `estate_postings` in turn. A search reads both. Rows are
-- written once and deleted when folded, never updated.
CREATE TABLE estate_postings_pending (
  bucket  integer NOT NULL CHECK (bucket BETWEEN 0 AND 255),
  seq     bigint  NOT NULL,
  entries text    NOT NULL,
  PRIMARY KEY (bucket, seq)
);
