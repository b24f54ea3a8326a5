-- The append-only log (DESIGN.md, "The log"). Nothing ever updates or deletes a row here.
CREATE TABLE events (
  position        bigint GENERATED ALWAYS AS IDENTITY,
  -- The writer's transaction: readers deliver in (transaction_id, position) order and only
  -- below the oldest running transaction, so late commits are never skipped.
  transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
  stream_id       text        NOT NULL,
  revision        bigint      NOT NULL CHECK (revision >= 0),
  event_id        uuid        NOT NULL,
  type            text        NOT NULL,
  data            jsonb       NOT NULL,
  metadata        jsonb       NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT events_stream_revision UNIQUE (stream_id, revision),
  -- Global order, and the key readers page by. Position alone is unique by its sequence; one
  -- index fewer on the append path.
  CONSTRAINT events_global_order PRIMARY KEY (transaction_id, position)
);

CREATE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'the events table is append-only (% refused)', TG_OP;
END $$;

CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events
  FOR EACH ROW EXECUTE FUNCTION events_are_immutable();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_are_immutable();

-- One row per projection: how far it has applied the log, written in the same transaction
-- as its read-model changes.
CREATE TABLE projection_checkpoints (
  name        text PRIMARY KEY,
  commit_pos  bigint      NOT NULL,
  prepare_pos bigint      NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);
