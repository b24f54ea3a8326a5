-- The log's hash chain and its signed checkpoints (infra/audit/). Kept beside the log whichever
-- adapter holds it: one row per event in global order, written by the chainer after the event
-- became visible. Append-only like `events`.
CREATE TABLE event_chain (
  -- 1, 2, 3, ...: the event's place in the chain; a gap or a repeat is impossible by construction.
  seq         bigint PRIMARY KEY CHECK (seq >= 1),
  commit_pos  bigint NOT NULL,
  prepare_pos bigint NOT NULL,
  -- SHA-256(previous hash ‖ canonical JSON of the event), see crypto/audit.ts.
  hash        bytea  NOT NULL CHECK (length(hash) = 32),
  CONSTRAINT event_chain_position UNIQUE (commit_pos, prepare_pos)
);

-- At most every 1,000 events or every minute: the chain's head, signed with the audit key.
CREATE TABLE audit_checkpoints (
  seq         bigint PRIMARY KEY REFERENCES event_chain (seq),
  commit_pos  bigint      NOT NULL,
  prepare_pos bigint      NOT NULL,
  hash        bytea       NOT NULL,
  at          timestamptz NOT NULL,
  -- The raw Ed25519 public key (hex) that signed it, and the signature over {position, hash, at}.
  public_key  text        NOT NULL,
  signature   bytea       NOT NULL
);

CREATE FUNCTION audit_rows_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the % table is append-only (% refused)', TG_TABLE_NAME, TG_OP;
END $$;

CREATE TRIGGER event_chain_no_update_delete BEFORE UPDATE OR DELETE ON event_chain
  FOR EACH ROW EXECUTE FUNCTION audit_rows_are_immutable();
CREATE TRIGGER event_chain_no_truncate BEFORE TRUNCATE ON event_chain
  FOR EACH STATEMENT EXECUTE FUNCTION audit_rows_are_immutable();
CREATE TRIGGER audit_checkpoints_no_update_delete BEFORE UPDATE OR DELETE ON audit_checkpoints
  FOR EACH ROW EXECUTE FUNCTION audit_rows_are_immutable();
CREATE TRIGGER audit_checkpoints_no_truncate BEFORE TRUNCATE ON audit_checkpoints
  FOR EACH STATEMENT EXECUTE FUNCTION audit_rows_are_immutable();
