-- Polls, scheduled messages, bookmarks, the scheduler's jobs, meetings and web push (issue 18,
-- items 3-6, 9, 10).

-- Jobs the scheduler fires, kept from the log by the `scheduled_jobs` projection: scheduled
-- messages, poll closings, meeting reminders. `lease_owner` / `lease_until` are the scheduler's
-- own (a claim with FOR UPDATE SKIP LOCKED takes a 30 s lease; a lapsed one is claimed again).
CREATE TABLE scheduled_jobs (
  id text PRIMARY KEY,
  kind text NOT NULL,
  subject_id uuid NOT NULL,
  due_at timestamptz NOT NULL,
  data jsonb NOT NULL DEFAULT '{}',
  lease_owner text,
  lease_until timestamptz
);
CREATE INDEX scheduled_jobs_due ON scheduled_jobs (due_at);

CREATE TABLE chat_scheduled_messages (
  id uuid PRIMARY KEY,
  sender_id uuid NOT NULL,
  channel_id uuid NOT NULL,
  ciphertext text NOT NULL,
  send_at timestamptz NOT NULL,
  thread_root_id uuid,
  mentions uuid[] NOT NULL DEFAULT '{}',
  file_ids text[] NOT NULL DEFAULT '{}',
  status text NOT NULL,
  reason text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  delivered_at timestamptz
);
CREATE INDEX chat_scheduled_messages_sender ON chat_scheduled_messages (sender_id, send_at);

CREATE TABLE chat_polls (
  id uuid PRIMARY KEY,
  channel_id uuid NOT NULL,
  creator_id uuid NOT NULL,
  question text NOT NULL,
  options jsonb NOT NULL,
  multiple_choice boolean NOT NULL,
  anonymous boolean NOT NULL,
  closes_at timestamptz,
  closed_at timestamptz,
  closed_by uuid,
  created_at timestamptz NOT NULL,
  log_commit bigint NOT NULL,
  log_prepare bigint NOT NULL
);
CREATE INDEX chat_polls_channel ON chat_polls (channel_id, log_commit DESC, log_prepare DESC);

CREATE TABLE chat_poll_votes (
  poll_id uuid NOT NULL,
  user_id uuid NOT NULL,
  option_id text NOT NULL,
  voted_at timestamptz NOT NULL,
  PRIMARY KEY (poll_id, user_id, option_id)
);

CREATE TABLE chat_bookmarks (
  user_id uuid NOT NULL,
  message_id uuid NOT NULL,
  channel_id uuid NOT NULL,
  created_at timestamptz NOT NULL,
  log_commit bigint NOT NULL,
  log_prepare bigint NOT NULL,
  PRIMARY KEY (user_id, message_id)
);
CREATE INDEX chat_bookmarks_newest ON chat_bookmarks (user_id, log_commit DESC, log_prepare DESC);

-- Checkpoints of the log followers that act rather than keep a read model (infra/scheduler/
-- reactor.ts): the scheduled-message poster and the web-push sender. Never emptied by rebuild.
CREATE TABLE chat_reactor_checkpoints (
  name text PRIMARY KEY,
  commit_pos bigint NOT NULL,
  prepare_pos bigint NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
