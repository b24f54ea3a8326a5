-- Agent chat read models (projection `agent_chat`: conversations, their messages, daily usage
-- per profile) and the audit log (projection `audit_log`, which takes over the identity slice's
-- `security_audit`: failed logins and key rotations are audit entries like the chat's).

CREATE TABLE agent_chat_conversations (
  id              uuid PRIMARY KEY,
  profile_id      uuid        NOT NULL,
  profile_slug    text        NOT NULL,
  kind            text        NOT NULL,
  -- `visitor` (owner_id: SHA-256 of the visitor token) or `account` (owner_id: the account id).
  owner_kind      text        NOT NULL,
  owner_id        text        NOT NULL,
  visitor_id      text,
  follows         uuid,
  message_count   integer     NOT NULL DEFAULT 0,
  started_at      timestamptz NOT NULL,
  last_message_at timestamptz NOT NULL,
  expires_at      timestamptz NOT NULL
);
CREATE INDEX agent_chat_conversations_recent ON agent_chat_conversations (last_message_at DESC, id DESC);
CREATE INDEX agent_chat_conversations_owner ON agent_chat_conversations (owner_id, kind, last_message_at DESC);

-- Personal data: `content` holds what visitors wrote and what the model answered.
CREATE TABLE agent_chat_messages (
  id              uuid PRIMARY KEY,
  conversation_id uuid        NOT NULL,
  seq             bigint      NOT NULL,
  role            text        NOT NULL,
  content         text        NOT NULL,
  tokens          jsonb,
  cost_cents      double precision NOT NULL,
  model           text,
  created_at      timestamptz NOT NULL,
  UNIQUE (conversation_id, seq)
);
-- Turns per minute on /ws/live count the newest replies.
CREATE INDEX agent_chat_messages_recent ON agent_chat_messages (created_at);

CREATE TABLE agent_chat_usage_daily (
  profile_id        uuid   NOT NULL,
  day               date   NOT NULL,
  requests          bigint NOT NULL,
  input_tokens      bigint NOT NULL,
  output_tokens     bigint NOT NULL,
  cache_read_tokens bigint NOT NULL,
  cost_cents        double precision NOT NULL,
  PRIMARY KEY (profile_id, day)
);

-- One row per security event, with the global log position of the event it came from
-- (commit_pos, prepare_pos), so an entry can be checked against the log and its hash chain.
CREATE TABLE audit_log (
  event_id     uuid PRIMARY KEY,
  commit_pos   bigint      NOT NULL,
  prepare_pos  bigint      NOT NULL,
  stream_id    text        NOT NULL,
  event_type   text        NOT NULL,
  severity     text        NOT NULL,
  profile_slug text,
  actor        jsonb       NOT NULL,
  detail       jsonb       NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX audit_log_newest ON audit_log (commit_pos DESC, prepare_pos DESC);

DROP TABLE security_audit;
DELETE FROM projection_checkpoints WHERE name = 'security_audit';
