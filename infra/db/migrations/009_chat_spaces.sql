-- Chat communities, groups, channels (standalone, group, DM), messages (ciphertext), pins,
-- read cursors, moderation and sender keys (projections chat_communities, chat_groups,
-- chat_channels, chat_messages, chat_sender_keys).

CREATE TABLE chat_communities (
  id               uuid PRIMARY KEY,
  name             text        NOT NULL,
  description      text        NOT NULL DEFAULT '',
  theme            text,
  welcome_message  text,
  discoverable     boolean     NOT NULL DEFAULT false,
  owner_id         uuid        NOT NULL,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  deleted_at       timestamptz
);

CREATE TABLE chat_community_members (
  community_id  uuid        NOT NULL,
  user_id       uuid        NOT NULL,
  role          text        NOT NULL,
  nickname      text,
  joined_at     timestamptz NOT NULL,
  PRIMARY KEY (community_id, user_id)
);
CREATE INDEX chat_community_members_user ON chat_community_members (user_id);

CREATE TABLE chat_community_bans (
  community_id  uuid        NOT NULL,
  user_id       uuid        NOT NULL,
  reason        text,
  banned_by     uuid        NOT NULL,
  created_at    timestamptz NOT NULL,
  PRIMARY KEY (community_id, user_id)
);

CREATE TABLE chat_community_invites (
  id            uuid PRIMARY KEY,
  community_id  uuid        NOT NULL,
  code_hash     text        NOT NULL UNIQUE,
  -- Sealed with the server key: moderators see their community's codes again in the list.
  code_sealed   text        NOT NULL,
  grants_role   text,
  max_uses      integer,
  uses          integer     NOT NULL DEFAULT 0,
  expires_at    timestamptz,
  created_by    uuid        NOT NULL,
  created_at    timestamptz NOT NULL,
  revoked_at    timestamptz
);
CREATE INDEX chat_community_invites_community ON chat_community_invites (community_id, created_at);

CREATE TABLE chat_community_warnings (
  id            uuid PRIMARY KEY,
  community_id  uuid        NOT NULL,
  channel_id    uuid        NOT NULL,
  user_id       uuid        NOT NULL,
  reason        text        NOT NULL,
  warned_by     uuid        NOT NULL,
  created_at    timestamptz NOT NULL
);
CREATE INDEX chat_community_warnings_user ON chat_community_warnings (community_id, user_id, created_at);

CREATE TABLE chat_groups (
  id            uuid PRIMARY KEY,
  community_id  uuid        NOT NULL,
  name          text        NOT NULL,
  description   text        NOT NULL DEFAULT '',
  visibility    text        NOT NULL,
  accent_color  text,
  owner_id      uuid        NOT NULL,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  deleted_at    timestamptz
);
CREATE INDEX chat_groups_community ON chat_groups (community_id) WHERE deleted_at IS NULL;

CREATE TABLE chat_group_members (
  group_id   uuid        NOT NULL,
  user_id    uuid        NOT NULL,
  role       text        NOT NULL,
  joined_at  timestamptz NOT NULL,
  PRIMARY KEY (group_id, user_id)
);
CREATE INDEX chat_group_members_user ON chat_group_members (user_id);

CREATE TABLE chat_group_invites (
  id           uuid PRIMARY KEY,
  group_id     uuid        NOT NULL,
  code_hash    text        NOT NULL UNIQUE,
  code_sealed  text        NOT NULL,
  max_uses     integer,
  uses         integer     NOT NULL DEFAULT 0,
  expires_at   timestamptz,
  created_by   uuid        NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX chat_group_invites_group ON chat_group_invites (group_id, created_at);

CREATE TABLE chat_channels (
  id              uuid PRIMARY KEY,
  -- standalone | group | dm
  scope           text        NOT NULL,
  -- text (the default) or another kind a client names (voice, announcements, ...)
  kind            text        NOT NULL,
  group_id        uuid,
  community_id    uuid,
  name            text        NOT NULL,
  description     text        NOT NULL DEFAULT '',
  topic           text,
  slow_mode_secs  integer     NOT NULL DEFAULT 0,
  read_only       boolean     NOT NULL DEFAULT false,
  archived        boolean     NOT NULL DEFAULT false,
  owner_id        uuid,
  created_by      uuid        NOT NULL,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  deleted_at      timestamptz
);
CREATE INDEX chat_channels_group ON chat_channels (group_id) WHERE deleted_at IS NULL;

CREATE TABLE chat_channel_members (
  channel_id  uuid        NOT NULL,
  user_id     uuid        NOT NULL,
  role        text        NOT NULL,
  joined_at   timestamptz NOT NULL,
  PRIMARY KEY (channel_id, user_id)
);
CREATE INDEX chat_channel_members_user ON chat_channel_members (user_id);

CREATE TABLE chat_channel_bans (
  channel_id  uuid        NOT NULL,
  user_id     uuid        NOT NULL,
  banned_by   uuid        NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (channel_id, user_id)
);

CREATE TABLE chat_channel_timeouts (
  channel_id  uuid        NOT NULL,
  user_id     uuid        NOT NULL,
  until       timestamptz NOT NULL,
  reason      text,
  timed_out_by uuid       NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (channel_id, user_id)
);

CREATE TABLE chat_pins (
  channel_id  uuid        NOT NULL,
  message_id  uuid        NOT NULL,
  pinned_by   uuid        NOT NULL,
  pinned_at   timestamptz NOT NULL,
  PRIMARY KEY (channel_id, message_id)
);

CREATE TABLE chat_messages (
  id              uuid PRIMARY KEY,
  channel_id      uuid        NOT NULL,
  sender_id       uuid        NOT NULL,
  -- Opaque to the server (E2EE), except plaintext for webhook messages (via_webhook).
  ciphertext      text        NOT NULL,
  kind            text        NOT NULL DEFAULT 'text',
  thread_root_id  uuid,
  mentions        uuid[]      NOT NULL DEFAULT '{}',
  via_webhook     boolean     NOT NULL DEFAULT false,
  has_file        boolean     NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL,
  edited_at       timestamptz,
  deleted_at      timestamptz,
  -- The log position of MessagePosted: the channel's total order (ties of created_at cannot occur).
  log_commit      bigint      NOT NULL,
  log_prepare     bigint      NOT NULL
);
-- Ascending, so a row comparison with a `before` position is an index condition (scanned backward).
CREATE INDEX chat_messages_channel_order ON chat_messages (channel_id, log_commit, log_prepare);
CREATE INDEX chat_messages_sender ON chat_messages (channel_id, sender_id, created_at DESC);
CREATE INDEX chat_messages_thread ON chat_messages (thread_root_id) WHERE thread_root_id IS NOT NULL;
CREATE INDEX chat_messages_plaintext ON chat_messages USING gin (to_tsvector('english', ciphertext)) WHERE via_webhook;

CREATE TABLE chat_message_versions (
  message_id  uuid        NOT NULL,
  version     integer     NOT NULL,
  ciphertext  text        NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (message_id, version)
);

CREATE TABLE chat_mentions (
  message_id   uuid   NOT NULL,
  user_id      uuid   NOT NULL,
  channel_id   uuid   NOT NULL,
  log_commit   bigint NOT NULL,
  log_prepare  bigint NOT NULL,
  PRIMARY KEY (message_id, user_id)
);
CREATE INDEX chat_mentions_user ON chat_mentions (user_id, channel_id);

CREATE TABLE chat_read_cursors (
  channel_id   uuid        NOT NULL,
  user_id      uuid        NOT NULL,
  message_id   uuid        NOT NULL,
  log_commit   bigint      NOT NULL,
  log_prepare  bigint      NOT NULL,
  updated_at   timestamptz NOT NULL,
  PRIMARY KEY (channel_id, user_id)
);

CREATE TABLE chat_sender_keys (
  channel_id           uuid        NOT NULL,
  user_id              uuid        NOT NULL,
  chain_id             bigint      NOT NULL,
  -- The distribution (it holds the chain key) sealed with the server key.
  distribution_sealed  text        NOT NULL,
  updated_at           timestamptz NOT NULL,
  PRIMARY KEY (channel_id, user_id, chain_id)
);
