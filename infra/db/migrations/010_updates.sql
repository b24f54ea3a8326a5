-- Managed updates (projections update_checks, update_applies, update_maintenance, update_delivery).

-- The channel head per service: the last check, and the last verified manifest.
CREATE TABLE update_checks (
  service          text        PRIMARY KEY,
  channel          text        NOT NULL,
  host             text        NOT NULL,
  checked_at       timestamptz NOT NULL,
  result           text        NOT NULL,
  last_error       jsonb,
  latest_version   text,
  envelope         jsonb,
  -- The highest version this service's channel has ever verified (manifest_rollback guard).
  highest_version  text
);

CREATE TABLE update_applies (
  apply_id        uuid        PRIMARY KEY,
  service         text        NOT NULL,
  requested_by    text        NOT NULL,
  from_version    text        NOT NULL,
  to_version      text        NOT NULL,
  state           text        NOT NULL,
  outcome         text,
  error           jsonb,
  steps           jsonb       NOT NULL DEFAULT '[]',
  started_at      timestamptz NOT NULL,
  ended_at        timestamptz
);
CREATE INDEX update_applies_newest ON update_applies (started_at DESC, apply_id);

CREATE TABLE update_maintenance (
  id          int         PRIMARY KEY CHECK (id = 1),
  active      boolean     NOT NULL,
  apply_id    uuid,
  started_at  timestamptz,
  ended_at    timestamptz
);

CREATE TABLE update_delivery (
  id            int         PRIMARY KEY CHECK (id = 1),
  apply_id      uuid,
  to_version    text,
  checked_at    timestamptz NOT NULL,
  requirements  jsonb       NOT NULL
);
