-- The chat-service connector (spec 1, "Chat-service integration").
--
-- `chatsvc_integrations` is a read model (projections/orchestration/chatsvc.ts): one row per
-- profile with an integration, the bot token only sealed.
--
-- Every other table is the bot's device state. It is NOT a read model and never comes from the
-- log: private keys, ratchet sessions and sender-key states must be deleted when they are used
-- up (forward secrecy), which an append-only log cannot do. Rows are updated in place, every
-- secret column sealed under ORCH_INTEGRATION_ENCRYPTION_KEY with a context naming its row, and
-- everything of an integration is deleted with it.
CREATE TABLE chatsvc_integrations (
  profile_id            uuid        PRIMARY KEY,
  integration_id        uuid        NOT NULL UNIQUE,
  instance_url          text        NOT NULL,
  bot_user_id           uuid        NOT NULL,
  bot_username          text        NOT NULL,
  token_prefix          text        NOT NULL,
  token_sealed          text        NOT NULL,
  token_expires_at      timestamptz,
  status                text        NOT NULL,
  verify_tls            boolean     NOT NULL,
  identity_fingerprint  text        NOT NULL,
  default_community_id  uuid,
  connected_at          timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);

-- The bot's identity seed, signed prekeys (current and previous) and counters, as one sealed JSON.
CREATE TABLE chatsvc_devices (
  integration_id  uuid        PRIMARY KEY,
  profile_id      uuid        NOT NULL,
  state_sealed    text        NOT NULL,
  updated_at      timestamptz NOT NULL
);

-- One-time prekey secrets; a row is deleted as soon as a first message used it.
CREATE TABLE chatsvc_prekeys (
  integration_id  uuid    NOT NULL,
  key_id          integer NOT NULL,
  secret_sealed   text    NOT NULL,
  PRIMARY KEY (integration_id, key_id)
);

-- Double Ratchet sessions, one per DM peer.
CREATE TABLE chatsvc_sessions (
  integration_id    uuid        NOT NULL,
  peer_user_id      uuid        NOT NULL,
  peer_fingerprint  text        NOT NULL,
  session_sealed    text        NOT NULL,
  updated_at        timestamptz NOT NULL,
  PRIMARY KEY (integration_id, peer_user_id)
);

-- Sender-key states: the bot's own chain per channel (sender_id = the bot) and the chains of
-- the other members it follows.
CREATE TABLE chatsvc_sender_keys (
  integration_id  uuid        NOT NULL,
  channel_id      uuid        NOT NULL,
  sender_id       uuid        NOT NULL,
  chain_id        bigint      NOT NULL,
  own             boolean     NOT NULL,
  state_sealed    text        NOT NULL,
  updated_at      timestamptz NOT NULL,
  PRIMARY KEY (integration_id, channel_id, sender_id, chain_id)
);

-- Channels whose own chain must be replaced before the next send (SenderKeyRotationRequired).
CREATE TABLE chatsvc_rotations (
  integration_id  uuid NOT NULL,
  channel_id      uuid NOT NULL,
  PRIMARY KEY (integration_id, channel_id)
);

-- Per-channel catch-up cursors: the newest message handled.
CREATE TABLE chatsvc_cursors (
  integration_id   uuid        NOT NULL,
  channel_id       uuid        NOT NULL,
  last_message_id  uuid        NOT NULL,
  last_at          timestamptz NOT NULL,
  PRIMARY KEY (integration_id, channel_id)
);

-- Messages handled (answered or deliberately not), so a redelivery is never answered twice.
CREATE TABLE chatsvc_handled (
  integration_id  uuid        NOT NULL,
  message_id      uuid        NOT NULL,
  handled_at      timestamptz NOT NULL,
  PRIMARY KEY (integration_id, message_id)
);

-- Channel messages on a chain the bot does not know yet, held (ciphertext only) until a
-- SenderKeyUpdated decrypts them: at most 200 per channel, for 5 minutes.
CREATE TABLE chatsvc_held (
  integration_id  uuid        NOT NULL,
  channel_id      uuid        NOT NULL,
  message_id      uuid        NOT NULL,
  message         jsonb       NOT NULL,
  held_at         timestamptz NOT NULL,
  PRIMARY KEY (integration_id, message_id)
);
CREATE INDEX chatsvc_held_channel ON chatsvc_held (integration_id, channel_id, held_at);

-- The send_message tool's channel webhooks, their tokens sealed.
CREATE TABLE chatsvc_webhooks (
  integration_id  uuid NOT NULL,
  channel_id      uuid NOT NULL,
  webhook_id      text NOT NULL,
  token_sealed    text NOT NULL,
  PRIMARY KEY (integration_id, channel_id)
);

-- Rule 4: the orchestration conversation of each (integration, channel, sender); starts as the
-- UUIDv5 of the three, and moves on when a conversation expires.
CREATE TABLE chatsvc_conversations (
  integration_id   uuid NOT NULL,
  channel_id       uuid NOT NULL,
  sender_id        uuid NOT NULL,
  conversation_id  uuid NOT NULL,
  PRIMARY KEY (integration_id, channel_id, sender_id)
);
