// Agents (GET /api/agents): status and cost of every agent, a spawn form with every field of
// POST /api/spawn, and stop or kill (each after a confirmation) for one that has not ended. A spawn
// returns 201 with status `queued`: a runner process claims and runs it. Status follows the log:
// agent events on /ws are folded into the rows (work-events.ts). Readonly accounts see no write controls.

import { useEffect, useState } from 'preact/hooks';
import { api, type Schemas } from '../api/client.ts';
import { connected, listen } from '../live.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';
import { role } from '../session.ts';
import { Confirm } from '../ui/dialog.tsx';
import { problem, serverErrors, type FieldErrors } from '../ui/errors.ts';
import { Field, FormError, focusFirstError } from '../ui/field.tsx';
import { toast } from '../ui/toast.tsx';
import { loadProjects } from './projects.tsx';
import { applyAgentEvent, applyProjectEvent } from './work-events.ts';
import { ENDED, readAll, type Agent, type Project } from './work.ts';
import { handler } from '../ui/handler.ts';

type Spawn = Schemas['SpawnRequest'];
const ROLES: Spawn['role'][] = [
  'coordinator',
  'builder',
  'reviewer',
  'auditor',
  'security',
  'researcher',
  'tester',
  'deliberator',
  'planner',
  'custom',
];
const TEMPLATES: NonNullable<Spawn['template']>[] = ['coordinator', 'builder', 'custom'];
const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const BRANCH = /^[A-Za-z0-9._/-]{1,200}$/;
const SPAWN_FIELDS = [
  'name',
  'role',
  'project_id',
  'initial_prompt',
  'template',
  'custom_agent_md',
  'model',
  'base_branch',
  'persistent',
];

const usd = new Intl.NumberFormat('en', { style: 'currency', currency: 'USD', maximumFractionDigits: 4 });
const roleTemplate = (r: Spawn['role']) =>
  r === 'coordinator' ? 'coordinator' : r === 'custom' ? 'custom' : 'builder';

function SpawnForm(props: { projects: Project[]; onSpawned: (agent: Agent) => void }) {
  const [name, setName] = useState('');
  const [agentRole, setAgentRole] = useState<Spawn['role']>('builder');
  const [projectId, setProjectId] = useState(props.projects[0]?.id ?? '');
  const [prompt, setPrompt] = useState('');
  const [template, setTemplate] = useState<Spawn['template'] | ''>('');
  const [customMd, setCustomMd] = useState('');
  const [model, setModel] = useState('');
  const [baseBranch, setBaseBranch] = useState('');
  const [persistent, setPersistent] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const effectiveTemplate = template || roleTemplate(agentRole);

  function check(): FieldErrors {
    const found: FieldErrors = {};
    if (!NAME.test(name)) found.name = '1 to 64 letters, digits, dashes or underscores.';
    if (!projectId) found.project_id = 'Choose a project.';
    if (effectiveTemplate === 'custom' && !customMd.trim())
      found.custom_agent_md = 'The custom template needs its instructions.';
    if (baseBranch && (!BRANCH.test(baseBranch) || baseBranch.includes('..') || baseBranch.startsWith('-')))
      found.base_branch = 'A branch name (letters, digits, . _ / -).';
    return found;
  }

  async function submit(event: Event) {
    event.preventDefault();
    const found = check();
    setErrors(found);
    setFormError(null);
    const form = event.currentTarget as HTMLFormElement;
    if (Object.keys(found).length) {
      focusFirstError(form, 'spawn-error');
      return;
    }
    const body: Spawn = {
      name,
      role: agentRole,
      project_id: projectId,
      ...(prompt.trim() ? { initial_prompt: prompt } : {}),
      ...(template ? { template } : {}),
      ...(effectiveTemplate === 'custom' ? { custom_agent_md: customMd } : {}),
      ...(model.trim() ? { model: model.trim() } : {}),
      ...(baseBranch ? { base_branch: baseBranch } : {}),
      persistent,
    };
    setBusy(true);
    const { data, error } = await api.POST('/api/spawn', { body });
    setBusy(false);
    if (data) {
      props.onSpawned(data);
      setName('');
      setPrompt('');
      return;
    }
    const mapped = serverErrors(problem(error), SPAWN_FIELDS);
    setErrors(mapped.fields);
    setFormError(mapped.form);
    focusFirstError(form, 'spawn-error');
  }

  return (
    <form class="form spawn" onSubmit={handler(submit)} noValidate aria-labelledby="spawn-heading">
      <h2 id="spawn-heading">Spawn an agent</h2>
      <FormError id="spawn-error" message={formError} />
      <Field
        id="spawn-name"
        label="Name"
        hint="Letters, digits, dashes and underscores"
        error={errors.name}
        required
        value={name}
        onInput={setName}
      />
      <Field
        id="spawn-role"
        label="Role"
        kind="select"
        error={errors.role}
        options={ROLES.map((r) => ({ value: r, label: r }))}
        value={agentRole}
        onInput={(v) => setAgentRole(v as Spawn['role'])}
      />
      <Field
        id="spawn-project_id"
        label="Project"
        kind="select"
        error={errors.project_id}
        options={props.projects.map((p) => ({ value: p.id, label: p.name }))}
        value={projectId}
        onInput={setProjectId}
      />
      <Field
        id="spawn-initial_prompt"
        label="Initial prompt (optional)"
        kind="textarea"
        error={errors.initial_prompt}
        value={prompt}
        onInput={setPrompt}
      />
      <Field
        id="spawn-template"
        label="Template"
        kind="select"
        error={errors.template}
        options={[
          { value: '', label: `The role's own (${roleTemplate(agentRole)})` },
          ...TEMPLATES.map((t) => ({ value: t, label: t })),
        ]}
        value={template ?? ''}
        onInput={(v) => setTemplate(v as Spawn['template'] | '')}
      />
      {effectiveTemplate === 'custom' && (
        <Field
          id="spawn-custom_agent_md"
          label="Custom instructions"
          kind="textarea"
          hint="The agent's instructions, used by the custom template"
          error={errors.custom_agent_md}
          required
          value={customMd}
          onInput={setCustomMd}
        />
      )}
      <Field
        id="spawn-model"
        label="Model (optional)"
        hint="The server's default model when empty"
        error={errors.model}
        value={model}
        onInput={setModel}
      />
      <Field
        id="spawn-base_branch"
        label="Base branch (optional)"
        hint="main when empty"
        error={errors.base_branch}
        value={baseBranch}
        onInput={setBaseBranch}
      />
      <Field
        id="spawn-persistent"
        label="Persistent"
        kind="checkbox"
        hint="Keep the working directory when the agent ends, and resume there."
        checked={persistent}
        onChange={setPersistent}
      />
      <button type="submit" disabled={busy}>
        {busy ? 'Spawning…' : 'Spawn agent'}
      </button>
    </form>
  );
}

export function Agents() {
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [projects, setProjects] = useState<Project[]>([]);
  const [error, setError] = useState<ReturnType<typeof problem> | null>(null);
  const [confirm, setConfirm] = useState<{ agent: Agent; verb: 'stop' | 'kill' } | null>(null);
  const [confirmError, setConfirmError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const canWrite = role.value === 'user' || role.value === 'admin';

  const upsert = (agent: Agent) =>
    setAgents((list) =>
      (list ?? []).some((a) => a.id === agent.id)
        ? (list ?? []).map((a) => (a.id === agent.id ? agent : a))
        : [...(list ?? []), agent],
    );

  async function load() {
    const [all, ps] = await Promise.all([
      readAll(async (limit, offset) => {
        const { data, error: failed } = await api.GET('/api/agents', { params: { query: { limit, offset } } });
        return data ? { rows: data.agents, total: data.total } : { error: failed };
      }),
      loadProjects(),
    ]);
    if (!Array.isArray(all)) return setError(problem(all.error));
    if (!Array.isArray(ps)) return setError(problem(ps.error));
    setAgents(all);
    setProjects(ps);
    setError(null);
  }

  useEffect(() => {
    void load();
    return listen((event) => {
      setAgents((list) => (list ? applyAgentEvent(list, event) : list));
      setProjects((list) => applyProjectEvent(list, event));
    });
  }, []);

  async function act() {
    if (!confirm) return;
    const { agent, verb } = confirm;
    setBusy(true);
    setConfirmError(null);
    const path = verb === 'stop' ? '/api/agents/{id}/stop' : '/api/agents/{id}/kill';
    const { data, error: failed } = await api.POST(path, { params: { path: { id: agent.id } } });
    setBusy(false);
    if (!data) {
      setConfirmError(problem(failed).message);
      return;
    }
    upsert(data);
    setConfirm(null);
    toast(`${agent.name} is ${data.status}.`);
  }

  const projectName = (id: string) => projects.find((p) => p.id === id)?.name ?? id.slice(0, 8);
  return (
    <Page title="Agents">
      <p class="live-state muted">{connected.value ? 'Live: up to date' : 'Live: connecting…'}</p>
      {error ? (
        <LoadFailed error={error} retry={handler(load)} />
      ) : !agents ? (
        <Loading />
      ) : (
        <>
          {agents.length === 0 ? (
            <p>No agents yet.</p>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">Agents, their status and cost</caption>
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Role</th>
                    <th scope="col">Project</th>
                    <th scope="col">Status</th>
                    <th scope="col" class="num">
                      Cost
                    </th>
                    <th scope="col">Spawned</th>
                    {canWrite && (
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {agents.map((a) => (
                    <tr key={a.id} data-agent-id={a.id}>
                      <th scope="row">{a.name}</th>
                      <td>{a.role}</td>
                      <td>
                        <a href={`/projects/${a.project_id}`}>{projectName(a.project_id)}</a>
                      </td>
                      <td class="agent-status">
                        {a.status}
                        {a.status_reason ? ` (${a.status_reason})` : ''}
                      </td>
                      <td class="num">{usd.format(a.total_cost_usd)}</td>
                      <td>{new Date(a.created_at).toLocaleString()}</td>
                      {canWrite && (
                        <td class="row-actions">
                          {!ENDED.has(a.status) && (
                            <>
                              <button
                                type="button"
                                class="secondary small"
                                onClick={() => {
                                  setConfirmError(null);
                                  setConfirm({ agent: a, verb: 'stop' });
                                }}
                              >
                                Stop<span class="visually-hidden"> {a.name}</span>
                              </button>
                              <button
                                type="button"
                                class="danger small"
                                onClick={() => {
                                  setConfirmError(null);
                                  setConfirm({ agent: a, verb: 'kill' });
                                }}
                              >
                                Kill<span class="visually-hidden"> {a.name}</span>
                              </button>
                            </>
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {canWrite &&
            (projects.length === 0 ? (
              <p>
                Create a <a href="/projects">project</a> first: an agent works in one.
              </p>
            ) : (
              <SpawnForm
                projects={projects}
                onSpawned={(agent) => {
                  upsert(agent);
                  toast(`Spawned ${agent.name}: ${agent.status}, waiting for a runner.`);
                }}
              />
            ))}
        </>
      )}
      {confirm && (
        <Confirm
          title={confirm.verb === 'stop' ? `Stop ${confirm.agent.name}?` : `Kill ${confirm.agent.name}?`}
          question={
            confirm.verb === 'stop'
              ? `The agent moves to stopped and its runner abandons it; its credential stops working. This cannot be undone.`
              : `The agent moves to killed at once and its runner abandons it; its credential stops working. This cannot be undone.`
          }
          confirm={confirm.verb === 'stop' ? 'Stop agent' : 'Kill agent'}
          busy={busy}
          error={confirmError}
          onConfirm={handler(act)}
          onClose={() => setConfirm(null)}
        />
      )}
    </Page>
  );
}
