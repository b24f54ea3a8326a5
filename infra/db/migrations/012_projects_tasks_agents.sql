-- Projects, tasks, spawned agents, MCP server registrations and the cockpit summary
-- (projections `projects`, `tasks`, `agents`, `mcp_servers`, `cockpit`).
CREATE TABLE projects (
  id                    uuid PRIMARY KEY,
  name                  text        NOT NULL,
  repo_path             text,
  max_concurrent_agents integer     NOT NULL,
  owner_id              uuid        NOT NULL,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
CREATE INDEX projects_created ON projects (created_at, id);

CREATE TABLE tasks (
  id              uuid PRIMARY KEY,
  project_id      uuid        NOT NULL,
  title           text        NOT NULL,
  description     text,
  priority        text        NOT NULL,
  status          text        NOT NULL,
  directive_id    uuid,
  parent_task_id  uuid,
  branch_name     text,
  created_by      uuid,
  created_by_user uuid,
  assigned_agent_id uuid,
  metadata        jsonb       NOT NULL DEFAULT '{}',
  depends_on      jsonb       NOT NULL DEFAULT '[]',
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL
);
CREATE INDEX tasks_created ON tasks (created_at, id);
CREATE INDEX tasks_project ON tasks (project_id, created_at, id);
CREATE INDEX tasks_status ON tasks (status, created_at, id);

CREATE TABLE agents (
  id              uuid PRIMARY KEY,
  name            text        NOT NULL,
  role            text        NOT NULL,
  project_id      uuid        NOT NULL,
  template        text        NOT NULL,
  custom_agent_md text,
  initial_prompt  text,
  model           text        NOT NULL,
  base_branch     text        NOT NULL,
  persistent      boolean     NOT NULL,
  status          text        NOT NULL,
  status_reason   text,
  total_cost_usd  numeric     NOT NULL DEFAULT 0,
  created_by_user uuid,
  runner_instance text,
  created_at      timestamptz NOT NULL,
  claimed_at      timestamptz,
  started_at      timestamptz,
  ended_at        timestamptz,
  updated_at      timestamptz NOT NULL
);
CREATE INDEX agents_created ON agents (created_at, id);
CREATE INDEX agents_project_status ON agents (project_id, status);
CREATE INDEX agents_queued ON agents (created_at, id) WHERE status = 'queued';

-- The stored set, in the order it was sent; `env_sealed` holds the whole env map sealed.
CREATE TABLE mcp_servers (
  position    integer PRIMARY KEY,
  name        text    NOT NULL UNIQUE,
  command     text    NOT NULL,
  args        jsonb   NOT NULL,
  env_keys    jsonb   NOT NULL,
  env_sealed  text    NOT NULL,
  description text
);

-- The cockpit: per-project task counts, one row of totals, agent cost per UTC day.
CREATE TABLE cockpit_projects (
  project_id     uuid PRIMARY KEY,
  name           text        NOT NULL,
  max_concurrent integer     NOT NULL,
  open           integer     NOT NULL DEFAULT 0,
  in_progress    integer     NOT NULL DEFAULT 0,
  done           integer     NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL
);
CREATE INDEX cockpit_projects_created ON cockpit_projects (created_at, project_id);

CREATE TABLE cockpit_totals (
  id                  boolean PRIMARY KEY DEFAULT true CHECK (id),
  agents_configured   integer NOT NULL DEFAULT 0,
  agents_active       integer NOT NULL DEFAULT 0,
  max_concurrent      integer NOT NULL DEFAULT 0,
  last_task_created   timestamptz,
  last_task_completed timestamptz
);

CREATE TABLE cockpit_cost_daily (
  day date    PRIMARY KEY,
  usd numeric NOT NULL
);
