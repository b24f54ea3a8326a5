-- Agent profiles (projection `profiles`) and per-bot knowledge snippets (projection
-- `knowledge_snippets`), with the full-text search of bot knowledge.
CREATE TABLE profiles (
  id                       uuid PRIMARY KEY,
  slug                     text        NOT NULL UNIQUE,
  name                     text        NOT NULL,
  description              text        NOT NULL,
  security_tier            integer     NOT NULL,
  model                    text        NOT NULL,
  system_prompt            text        NOT NULL,
  max_tokens               integer     NOT NULL,
  temperature              double precision NOT NULL,
  pii_scrub                boolean     NOT NULL,
  cost_cap_daily_cents     integer     NOT NULL,
  rate_limit_rpm           integer     NOT NULL,
  rate_limit_rpd           integer     NOT NULL,
  enabled                  boolean     NOT NULL,
  knowledge_search_enabled boolean     NOT NULL,
  channel_reply_mode       text        NOT NULL,
  can_use_tools            boolean     NOT NULL,
  integrations             jsonb       NOT NULL DEFAULT '{}',
  conversation_ttl_hours   integer     NOT NULL,
  template                 text,
  created_at               timestamptz NOT NULL,
  updated_at               timestamptz NOT NULL
);

-- `search`: English stemming, the title weighted A over the content's B, kept by PostgreSQL
-- itself. Rows stay inline up to 8 KB (toast_tuple_target): ranking reads every matching row's
-- vector, and an out-of-line vector costs a TOAST lookup per row, twice the ranking's own time.
CREATE TABLE knowledge_snippets (
  id         uuid PRIMARY KEY,
  profile_id uuid        NOT NULL,
  -- The snippet's event revision in its profile's stream: orders snippets added in one append.
  revision   bigint      NOT NULL,
  title      text        NOT NULL,
  content    text        NOT NULL,
  source     text,
  metadata   jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  search     tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, title), 'A') || setweight(to_tsvector('english'::regconfig, content), 'B')
  ) STORED
) WITH (toast_tuple_target = 8160);
CREATE INDEX knowledge_snippets_profile ON knowledge_snippets (profile_id, created_at DESC, revision DESC);
CREATE INDEX knowledge_snippets_search ON knowledge_snippets USING gin (search);

-- OR of many tsqueries (`||` as an aggregate): the search ORs the query's lexemes.
CREATE AGGREGATE tsquery_or_agg(tsquery) (SFUNC = tsquery_or, STYPE = tsquery);
