-- Read model of orchestration accounts (projection `users`).
CREATE TABLE users (
  id             uuid PRIMARY KEY,
  username       text        NOT NULL UNIQUE,
  email          text        NOT NULL,
  role           text        NOT NULL,
  auth_source    text        NOT NULL,
  is_active      boolean     NOT NULL,
  api_key_hash   text        NOT NULL UNIQUE,
  api_key_sealed text        NOT NULL,
  password_hash  text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));
