-- Chat service accounts, sessions, TOTP, keys, blocks, reports and registration invites
-- (projections chat_users, chat_sessions, chat_totp, chat_keys, chat_blocks, chat_reports, chat_invites).

CREATE TABLE chat_users (
  id             uuid PRIMARY KEY,
  username       text        NOT NULL,
  display_name   text        NOT NULL,
  -- Cleared when the account is deleted (the row stays: messages keep their author).
  email          text,
  password_hash  text,
  is_owner       boolean     NOT NULL DEFAULT false,
  is_admin       boolean     NOT NULL DEFAULT false,
  is_bot         boolean     NOT NULL DEFAULT false,
  avatar_url     text,
  bio            text,
  pronouns       text,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  deleted_at     timestamptz
);
CREATE UNIQUE INDEX chat_users_username_lower ON chat_users (lower(username));
CREATE UNIQUE INDEX chat_users_email_lower ON chat_users (lower(email)) WHERE email IS NOT NULL;
CREATE INDEX chat_users_username_prefix ON chat_users (lower(username) text_pattern_ops);

CREATE TABLE chat_sessions (
  id            uuid PRIMARY KEY,
  user_id       uuid        NOT NULL,
  origin        text        NOT NULL,
  user_agent    text,
  created_at    timestamptz NOT NULL,
  last_used_at  timestamptz NOT NULL,
  revoked_at    timestamptz,
  revoke_reason text
);
CREATE INDEX chat_sessions_user ON chat_sessions (user_id) WHERE revoked_at IS NULL;

CREATE TABLE chat_totp (
  user_id                uuid PRIMARY KEY,
  -- Sealed with the server key (crypto/seal.ts); pending until verified.
  secret_sealed          text,
  enabled                boolean     NOT NULL DEFAULT false,
  backup_codes_remaining integer     NOT NULL DEFAULT 0,
  updated_at             timestamptz NOT NULL
);

CREATE TABLE chat_identity_keys (
  user_id               uuid PRIMARY KEY,
  identity_key          text        NOT NULL,
  signed_key_id         bigint      NOT NULL,
  signed_public_key     text        NOT NULL,
  signed_signature      text        NOT NULL,
  previous_key_id       bigint,
  previous_public_key   text,
  previous_signature    text,
  previous_valid_until  timestamptz,
  updated_at            timestamptz NOT NULL
);

CREATE TABLE chat_one_time_prekeys (
  user_id      uuid        NOT NULL,
  key_id       bigint      NOT NULL,
  public_key   text        NOT NULL,
  uploaded_at  timestamptz NOT NULL,
  consumed_at  timestamptz,
  PRIMARY KEY (user_id, key_id)
);
CREATE INDEX chat_one_time_prekeys_unconsumed ON chat_one_time_prekeys (user_id) WHERE consumed_at IS NULL;

CREATE TABLE chat_blocks (
  user_id          uuid        NOT NULL,
  blocked_user_id  uuid        NOT NULL,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (user_id, blocked_user_id)
);

CREATE TABLE chat_reports (
  id           uuid PRIMARY KEY,
  reporter_id  uuid        NOT NULL,
  target_type  text        NOT NULL,
  target_id    text        NOT NULL,
  reason       text        NOT NULL,
  status       text        NOT NULL DEFAULT 'open',
  created_at   timestamptz NOT NULL
);
CREATE INDEX chat_reports_created ON chat_reports (created_at DESC);

CREATE TABLE chat_invites (
  id           uuid PRIMARY KEY,
  code_hash    text        NOT NULL UNIQUE,
  created_by   uuid        NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz,
  redeemed_by  uuid,
  redeemed_at  timestamptz,
  revoked_at   timestamptz
);
