-- Channel meetings (issue 18, item 9): the series, their per-occurrence exceptions, RSVPs, and
-- the calendar feed tokens (only the SHA-256 of a token is kept). The reminder jobs live in
-- `scheduled_jobs` (016), kind `meeting_reminder`, one per meeting.

CREATE TABLE chat_meetings (
  id uuid PRIMARY KEY,
  channel_id uuid NOT NULL,
  creator_id uuid NOT NULL,
  title text NOT NULL,
  description text NOT NULL,
  start_local text NOT NULL,
  time_zone text NOT NULL,
  duration_minutes integer NOT NULL,
  rrule text,
  reminders integer[] NOT NULL,
  location text,
  sequence integer NOT NULL,
  cancelled_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX chat_meetings_channel ON chat_meetings (channel_id);

-- One row per occurrence that differs from its series: cancelled (EXDATE) or changed (an
-- override with RECURRENCE-ID). NULL columns keep the series' value.
CREATE TABLE chat_meeting_occurrences (
  meeting_id uuid NOT NULL,
  occurrence_id text NOT NULL,
  cancelled boolean NOT NULL DEFAULT false,
  title text,
  description text,
  start_local text,
  duration_minutes integer,
  location text,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (meeting_id, occurrence_id)
);

-- `occurrence_id` '' is the answer for the whole series; an occurrence's own answer beats it.
CREATE TABLE chat_meeting_rsvps (
  meeting_id uuid NOT NULL,
  occurrence_id text NOT NULL,
  user_id uuid NOT NULL,
  status text NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (meeting_id, occurrence_id, user_id)
);

CREATE TABLE chat_calendar_feed_tokens (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL,
  token_hash text NOT NULL UNIQUE,
  channel_id uuid,
  label text,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX chat_calendar_feed_tokens_user ON chat_calendar_feed_tokens (user_id, created_at);
