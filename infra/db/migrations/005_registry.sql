-- The customer registry's read models (spec 3). Every table is owned by one projection
-- (projections/registry/*.ts) and rebuilt from the log by `orchard rebuild <name>`.

-- Projection `registry_customers`: customers and what is filed under them.
CREATE TABLE registry_customers (
  id               uuid PRIMARY KEY,
  slug             text        NOT NULL UNIQUE,
  name             text        NOT NULL,
  primary_email    text,
  status           text        NOT NULL,
  notes            text,
  pipeline_stage   text,
  next_action      text,
  next_action_date date,
  source           text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  deleted_at       timestamptz
);
CREATE INDEX registry_customers_status ON registry_customers (status) WHERE deleted_at IS NULL;
CREATE INDEX registry_customers_email ON registry_customers (lower(primary_email)) WHERE deleted_at IS NULL;

CREATE TABLE registry_contacts (
  id                uuid PRIMARY KEY,
  customer_id       uuid        NOT NULL,
  name              text        NOT NULL,
  email             text        NOT NULL,
  role              text        NOT NULL,
  last_contacted_at timestamptz,
  created_at        timestamptz NOT NULL
);
CREATE INDEX registry_contacts_customer ON registry_contacts (customer_id);

CREATE TABLE registry_touchpoints (
  id            uuid PRIMARY KEY,
  customer_id   uuid        NOT NULL,
  kind          text        NOT NULL,
  summary       text        NOT NULL,
  occurred_at   timestamptz NOT NULL,
  contact_email text,
  created_at    timestamptz NOT NULL
);
CREATE INDEX registry_touchpoints_customer ON registry_touchpoints (customer_id, occurred_at DESC);

CREATE TABLE registry_agreements (
  id           uuid PRIMARY KEY,
  customer_id  uuid        NOT NULL,
  kind         text        NOT NULL,
  title        text        NOT NULL,
  signed_at    date        NOT NULL,
  expires_at   date,
  document_url text,
  created_at   timestamptz NOT NULL
);
CREATE INDEX registry_agreements_customer ON registry_agreements (customer_id);

CREATE TABLE registry_usage (
  id           uuid PRIMARY KEY,
  customer_id  uuid        NOT NULL,
  product      text        NOT NULL,
  metric       text        NOT NULL,
  quantity     numeric     NOT NULL,
  period_start timestamptz NOT NULL,
  period_end   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX registry_usage_customer ON registry_usage (customer_id, period_start DESC);

-- Projection `registry_deployments`.
CREATE TABLE registry_deployments (
  id                uuid PRIMARY KEY,
  customer_id       uuid        NOT NULL,
  customer_slug     text        NOT NULL,
  product           text        NOT NULL,
  version           text        NOT NULL,
  channel           text        NOT NULL,
  endpoint_url      text,
  instance_id       text,
  first_deployed_at timestamptz NOT NULL,
  last_seen_at      timestamptz,
  created_at        timestamptz NOT NULL,
  updated_at        timestamptz NOT NULL
);
CREATE INDEX registry_deployments_customer ON registry_deployments (customer_id);
CREATE INDEX registry_deployments_product ON registry_deployments (product);

-- Projection `registry_subscriptions`.
CREATE TABLE registry_subscriptions (
  id                     uuid PRIMARY KEY,
  customer_id            uuid        NOT NULL,
  customer_slug          text        NOT NULL,
  product                text        NOT NULL,
  status                 text        NOT NULL,
  mrr_cents              bigint      NOT NULL,
  renewal_date           date,
  stripe_customer_id     text,
  stripe_subscription_id text,
  created_at             timestamptz NOT NULL,
  updated_at             timestamptz NOT NULL
);
CREATE INDEX registry_subscriptions_customer ON registry_subscriptions (customer_id);
CREATE INDEX registry_subscriptions_status ON registry_subscriptions (status);

-- Projection `registry_tokens`: machine tokens by the SHA-256 of the token, never the token.
CREATE TABLE registry_tokens (
  id           uuid PRIMARY KEY,
  name         text        NOT NULL,
  token_hash   text        NOT NULL UNIQUE,
  token_prefix text        NOT NULL,
  scopes       text[]      NOT NULL,
  created_by   text,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  revoked_at   timestamptz,
  last_used_at timestamptz
);

-- Projection `registry_sessions`: interactive (OIDC) sessions by the hash of the cookie.
CREATE TABLE registry_sessions (
  session_hash text PRIMARY KEY,
  subject      text        NOT NULL,
  name         text        NOT NULL,
  email        text,
  role         text        NOT NULL,
  via          text        NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL,
  ended_at     timestamptz
);

-- Projection `registry_trend`: month-end figures. The running totals (one row) follow the log;
-- when the first event of a later month arrives, every month before it is closed into
-- `registry_trend_months` and never written again, so a past month never changes.
CREATE TABLE registry_trend_customers (
  customer_id uuid PRIMARY KEY,
  status      text    NOT NULL,
  deleted     boolean NOT NULL DEFAULT false
);
CREATE TABLE registry_trend_subscriptions (
  subscription_id uuid PRIMARY KEY,
  customer_id     uuid   NOT NULL,
  status          text   NOT NULL,
  mrr_cents       bigint NOT NULL
);
CREATE INDEX registry_trend_subscriptions_customer ON registry_trend_subscriptions (customer_id);
CREATE TABLE registry_trend_state (
  id                int PRIMARY KEY CHECK (id = 1),
  month             date   NOT NULL,
  mrr_cents         bigint NOT NULL,
  lead              int    NOT NULL,
  trial             int    NOT NULL,
  paying            int    NOT NULL,
  churned           int    NOT NULL,
  internal          int    NOT NULL,
  new_customers     int    NOT NULL,
  churned_customers int    NOT NULL
);
CREATE TABLE registry_trend_months (
  month             date PRIMARY KEY,
  mrr_cents         bigint      NOT NULL,
  lead              int         NOT NULL,
  trial             int         NOT NULL,
  paying            int         NOT NULL,
  churned           int         NOT NULL,
  internal          int         NOT NULL,
  new_customers     int         NOT NULL,
  churned_customers int         NOT NULL,
  closed_at         timestamptz NOT NULL
);

-- Projection `registry_audit`: the registry's own events, newest first, for GET /api/v1/events.
CREATE TABLE registry_audit (
  commit_pos    bigint      NOT NULL,
  prepare_pos   bigint      NOT NULL,
  event_id      uuid        NOT NULL,
  type          text        NOT NULL,
  stream        text        NOT NULL,
  customer_slug text,
  actor         jsonb       NOT NULL,
  at            timestamptz NOT NULL,
  changes       jsonb,
  data          jsonb       NOT NULL,
  PRIMARY KEY (commit_pos, prepare_pos)
);
CREATE INDEX registry_audit_customer ON registry_audit (customer_slug, commit_pos DESC, prepare_pos DESC);
CREATE INDEX registry_audit_type ON registry_audit (type, commit_pos DESC, prepare_pos DESC);

-- Projection `registry_summary`: the summary's figures as counters, moved by each event, so
-- GET /api/v1/summary reads a handful of rows however many customers there are. The entity
-- tables keep what a later event needs to move the counters (a deletion takes its customer's
-- subscriptions and deployments out of every figure).
CREATE TABLE registry_summary_customers (
  customer_id uuid PRIMARY KEY,
  status      text    NOT NULL,
  deleted     boolean NOT NULL DEFAULT false,
  -- active subscriptions with positive MRR: the customer is a paying customer while above 0
  paying_subs int     NOT NULL DEFAULT 0
);
CREATE TABLE registry_summary_subscriptions (
  subscription_id uuid PRIMARY KEY,
  customer_id     uuid   NOT NULL,
  status          text   NOT NULL,
  mrr_cents       bigint NOT NULL
);
CREATE INDEX registry_summary_subscriptions_customer ON registry_summary_subscriptions (customer_id);
CREATE TABLE registry_summary_deployments (
  deployment_id uuid PRIMARY KEY,
  customer_id   uuid NOT NULL,
  product       text NOT NULL,
  channel       text NOT NULL
);
CREATE INDEX registry_summary_deployments_customer ON registry_summary_deployments (customer_id);
CREATE TABLE registry_summary_counters (
  metric text   NOT NULL,
  key    text   NOT NULL,
  n      bigint NOT NULL,
  PRIMARY KEY (metric, key)
);
