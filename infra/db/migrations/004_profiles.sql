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
-- itself; the GIN index answers full-text matches (`search @@ tsquery`).
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
);
CREATE INDEX knowledge_snippets_profile ON knowledge_snippets (profile_id, created_at DESC, revision DESC);
CREATE INDEX knowledge_snippets_search ON knowledge_snippets USING gin (search);

-- Retrieval's inverted index, kept by the same projection: one row per snippet and lexeme of its
-- `search` vector, with that lexeme's ts_rank_cd in the snippet. For a query whose lexemes are
-- ORed, ts_rank_cd is the sum of its lexemes' ts_rank_cd, so a search adds these up instead of
-- ranking every matching snippet's vector at query time (a common word matches thousands), and
-- a one-word search reads its best snippets straight from the index, in order.
CREATE TABLE knowledge_terms (
  snippet_id uuid   NOT NULL,
  lexeme     text   NOT NULL,
  profile_id uuid   NOT NULL,
  revision   bigint NOT NULL,
  score      real   NOT NULL,
  PRIMARY KEY (snippet_id, lexeme)
);
CREATE INDEX knowledge_terms_lookup ON knowledge_terms (profile_id, lexeme, score DESC, revision DESC) INCLUDE (snippet_id);
