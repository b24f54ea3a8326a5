-- Chat bots and their tokens, webhooks, the admin surface (suspension, quarantine, purges, audit
-- log, report reviews, announcements) and feedback (projections chat_users, chat_bot_tokens,
-- chat_bot_token_usage, chat_webhooks, chat_messages, chat_reports, chat_admin_audit,
-- chat_announcements, chat_feedback).

-- Bots are chat_users rows (is_bot); suspension applies to every account.
ALTER TABLE chat_users ADD COLUMN suspended_at   timestamptz;
ALTER TABLE chat_users ADD COLUMN suspend_reason text;
-- Bots: who created it (null for the bootstrap route) and the integration label it serves.
ALTER TABLE chat_users ADD COLUMN bot_created_by uuid;
ALTER TABLE chat_users ADD COLUMN bot_integration text;

CREATE TABLE chat_bot_tokens (
  id                     uuid PRIMARY KEY,
  bot_id                 uuid        NOT NULL,
  -- SHA-256 of the token; the token itself is shown once and never stored.
  token_hash             text        NOT NULL UNIQUE,
  prefix                 text        NOT NULL,
  scope                  text        NOT NULL,
  label                  text,
  expires_at             timestamptz,
  rate_limit_per_window  integer,
  created_by             uuid,
  created_at             timestamptz NOT NULL,
  revoked_at             timestamptz,
  revoked_by             uuid
);
CREATE INDEX chat_bot_tokens_bot ON chat_bot_tokens (bot_id, created_at);

-- Coalesced use (one event per token per minute at most), its own projection so a use never
-- invalidates the token cache.
CREATE TABLE chat_bot_token_usage (
  token_id      uuid PRIMARY KEY,
  last_used_at  timestamptz NOT NULL
);

CREATE TABLE chat_webhooks (
  id            uuid PRIMARY KEY,
  channel_id    uuid        NOT NULL,
  community_id  uuid,
  name          text        NOT NULL,
  avatar_url    text,
  active        boolean     NOT NULL DEFAULT true,
  token_hash    text        NOT NULL UNIQUE,
  created_by    uuid        NOT NULL,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL
);
CREATE INDEX chat_webhooks_channel ON chat_webhooks (channel_id, created_at);

-- Webhook posts: the display name and avatar of that post; quarantine hides a message.
ALTER TABLE chat_messages ADD COLUMN webhook_username   text;
ALTER TABLE chat_messages ADD COLUMN webhook_avatar_url text;
ALTER TABLE chat_messages ADD COLUMN quarantined_at     timestamptz;

ALTER TABLE chat_reports ADD COLUMN reviewed_by uuid;
ALTER TABLE chat_reports ADD COLUMN reviewed_at timestamptz;
ALTER TABLE chat_reports ADD COLUMN review_note text;

CREATE TABLE chat_admin_audit (
  -- The log position of the event: the audit log's order.
  log_commit   bigint      NOT NULL,
  log_prepare  bigint      NOT NULL,
  action       text        NOT NULL,
  actor_id     text,
  target_type  text,
  target_id    text,
  details      jsonb       NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (log_commit, log_prepare)
);
CREATE INDEX chat_admin_audit_action ON chat_admin_audit (action, log_commit DESC);
CREATE INDEX chat_admin_audit_actor ON chat_admin_audit (actor_id);
CREATE INDEX chat_admin_audit_target ON chat_admin_audit (target_id);

CREATE TABLE chat_announcements (
  id          uuid PRIMARY KEY,
  title       text        NOT NULL,
  body        text        NOT NULL,
  created_by  uuid        NOT NULL,
  created_at  timestamptz NOT NULL,
  expires_at  timestamptz
);

CREATE TABLE chat_announcement_dismissals (
  announcement_id  uuid        NOT NULL,
  user_id          uuid        NOT NULL,
  dismissed_at     timestamptz NOT NULL,
  PRIMARY KEY (announcement_id, user_id)
);

CREATE TABLE chat_feedback (
  id                 uuid PRIMARY KEY,
  user_id            uuid        NOT NULL,
  description        text        NOT NULL,
  -- The screenshot's base64 text is a blob (infra/blobs.ts) under this key.
  screenshot_blob    text,
  screenshot_mime    text,
  screenshot_bytes   integer,
  status             text        NOT NULL DEFAULT 'new',
  triaged_at         timestamptz,
  triaged_by         uuid,
  forwarded_to       text[]      NOT NULL DEFAULT '{}',
  created_at         timestamptz NOT NULL
);
CREATE INDEX chat_feedback_status ON chat_feedback (status, created_at DESC);
