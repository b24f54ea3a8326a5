-- Web push (issue 18, item 10): the subscriptions read model and presence heartbeats.

-- Push subscriptions, kept from the log by the `chat_push_subscriptions` projection. The endpoint
-- and the keys are delivery secrets (whoever holds them can push to the browser): sealed with
-- the server key, as in their events. `origin` (the push service, e.g. https://fcm.googleapis.com)
-- is not secret.
CREATE TABLE chat_push_subscriptions (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL,
  endpoint_sealed text NOT NULL,
  keys_sealed text NOT NULL,
  origin text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX chat_push_subscriptions_user ON chat_push_subscriptions (user_id);

-- Which users hold a socket on which chat instance: written by each instance's WebSocket hub
-- (a row when a user's first socket there authenticates, refreshed by heartbeats, dropped when
-- the last one closes), read by the push sender ("no socket on any instance"). Operational
-- state, not a read model: not from the log, never rebuilt. A row whose heartbeat stopped (a
-- killed instance) counts for a TTL only.
CREATE TABLE chat_presence (
  instance_id text NOT NULL,
  user_id uuid NOT NULL,
  seen_at timestamptz NOT NULL,
  PRIMARY KEY (instance_id, user_id)
);
CREATE INDEX chat_presence_user ON chat_presence (user_id, seen_at);
