-- Chat files (uploads, content-addressed blobs on disk), blocked content hashes, gated space
-- assets (community and group icons, banners, voice backgrounds) and custom emoji (projections
-- chat_files and chat_assets); messages gain the files they reference.

CREATE TABLE chat_files (
  id              uuid PRIMARY KEY,
  name            text        NOT NULL,
  size            bigint      NOT NULL,
  mime_type       text        NOT NULL,
  sha256          text        NOT NULL,
  channel_id      uuid,
  uploader_id     uuid        NOT NULL,
  created_at      timestamptz NOT NULL,
  quarantined     boolean     NOT NULL DEFAULT false,
  quarantine_reason text,
  quarantined_at  timestamptz,
  deleted_at      timestamptz
);
CREATE INDEX chat_files_uploader ON chat_files (uploader_id, created_at DESC);
CREATE INDEX chat_files_sha ON chat_files (sha256);
CREATE INDEX chat_files_created ON chat_files (created_at DESC, id);

CREATE TABLE chat_blocked_hashes (
  id          uuid PRIMARY KEY,
  sha256      text        NOT NULL UNIQUE,
  reason      text,
  created_by  uuid        NOT NULL,
  created_at  timestamptz NOT NULL
);

-- The files a message carries (its MessagePosted's file_ids).
ALTER TABLE chat_messages ADD COLUMN file_ids uuid[] NOT NULL DEFAULT '{}';

-- Icons, banners, voice backgrounds: the current one per (space, kind) is `current`.
CREATE TABLE chat_space_assets (
  filename      text PRIMARY KEY,
  scope         text        NOT NULL,
  space_id      uuid        NOT NULL,
  community_id  uuid        NOT NULL,
  kind          text        NOT NULL,
  sha256        text        NOT NULL,
  mime_type     text        NOT NULL,
  size          bigint      NOT NULL,
  created_by    uuid        NOT NULL,
  created_at    timestamptz NOT NULL,
  current       boolean     NOT NULL DEFAULT true
);
CREATE INDEX chat_space_assets_space ON chat_space_assets (space_id, kind) WHERE current;

CREATE TABLE chat_emojis (
  id            uuid PRIMARY KEY,
  community_id  uuid        NOT NULL,
  name          text        NOT NULL,
  sha256        text        NOT NULL,
  mime_type     text        NOT NULL,
  size          bigint      NOT NULL,
  created_by    uuid        NOT NULL,
  created_at    timestamptz NOT NULL,
  UNIQUE (community_id, name)
);
