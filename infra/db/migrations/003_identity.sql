-- Identity and access read models (projections `users`, `sessions`, `api_key_rotations`, `security_audit`).
ALTER TABLE users ADD COLUMN principal_type text NOT NULL DEFAULT 'account';

CREATE TABLE sessions (
  session_hash text PRIMARY KEY,
  user_id      uuid        NOT NULL,
  via          text        NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  ended_at     timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id);

-- Every key-rotation attempt, refused ones included; never a key value.
CREATE TABLE api_key_rotations (
  event_id       uuid PRIMARY KEY,
  actor_id       uuid,
  actor_kind     text        NOT NULL,
  target_user_id uuid,
  route          text        NOT NULL,
  outcome        text        NOT NULL,
  reason         text        NOT NULL,
  at             timestamptz NOT NULL
);
CREATE INDEX api_key_rotations_at ON api_key_rotations (at DESC);

CREATE TABLE security_audit (
  event_id   uuid PRIMARY KEY,
  event_type text        NOT NULL,
  severity   text        NOT NULL,
  user_id    uuid,
  details    jsonb       NOT NULL,
  at         timestamptz NOT NULL
);
CREATE INDEX security_audit_at ON security_audit (at DESC);
