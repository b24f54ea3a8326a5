// The board's dialogs: create a task (in the column it was asked from), edit one (PATCH sends only
// the fields that changed), and assign one to an agent of its project.

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { Dialog } from '../ui/dialog.tsx';
import { problem, serverErrors, type FieldErrors } from '../ui/errors.ts';
import { Field, FieldFrame, FormError, focusFirstError } from '../ui/field.tsx';
import { COLUMNS, PRIORITIES, readAll, type Agent, type Task, type TaskStatus } from './work.ts';
import { handler } from '../ui/handler.ts';

const TITLE_MAX = 500;
const TASK_FIELDS = ['title', 'priority', 'status', 'description', 'branch_name'];

export function TaskDialog(props: {
  projectId: string;
  task?: Task;
  status?: TaskStatus;
  onClose: () => void;
  onSaved: (task: Task) => void;
}) {
  const editing = props.task;
  const [title, setTitle] = useState(editing?.title ?? '');
  const [priority, setPriority] = useState<Task['priority']>(editing?.priority ?? 'medium');
  const [status, setStatus] = useState<TaskStatus>(editing?.status ?? props.status ?? 'backlog');
  const [description, setDescription] = useState(editing?.description ?? '');
  const [branch, setBranch] = useState(editing?.branch_name ?? '');
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const found: FieldErrors = {};
    if (!title.trim()) found.title = 'Give the task a title.';
    else if ([...title].length > TITLE_MAX) found.title = `At most ${TITLE_MAX} characters.`;
    if (branch && !branch.trim()) found.branch_name = 'A branch name, or nothing.';
    setErrors(found);
    setFormError(null);
    const form = event.currentTarget as HTMLFormElement;
    if (Object.keys(found).length) {
      focusFirstError(form, 'task-error');
      return;
    }
    const fields = {
      title: title.trim(),
      priority,
      description: description.trim() || null,
      branch_name: branch.trim() || null,
    };
    setBusy(true);
    const result = editing
      ? await api.PATCH('/api/tasks/{id}', {
          params: { path: { id: editing.id } },
          body: Object.fromEntries(
            Object.entries(fields).filter(([k, v]) => (editing as Record<string, unknown>)[k] !== v),
          ),
        })
      : await api.POST('/api/tasks', { body: { project_id: props.projectId, status, ...fields } });
    setBusy(false);
    if (result.data) {
      props.onSaved(result.data);
      return;
    }
    const mapped = serverErrors(problem(result.error), TASK_FIELDS);
    setErrors(mapped.fields);
    setFormError(mapped.form);
    focusFirstError(form, 'task-error');
  }

  return (
    <Dialog title={editing ? 'Edit task' : 'New task'} onClose={props.onClose}>
      <form class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="task-error" message={formError} />
        <FieldFrame id="task-title" label="Title" error={errors.title}>
          {(aria) => (
            <input {...aria} value={title} data-autofocus required onInput={(e) => setTitle(e.currentTarget.value)} />
          )}
        </FieldFrame>
        <Field
          id="task-priority"
          label="Priority"
          kind="select"
          error={errors.priority}
          options={PRIORITIES.map((p) => ({ value: p, label: p }))}
          value={priority}
          onInput={(v) => setPriority(v as Task['priority'])}
        />
        {!editing && (
          <Field
            id="task-status"
            label="Column"
            kind="select"
            error={errors.status}
            options={COLUMNS.map((c) => ({ value: c.status, label: c.label }))}
            value={status}
            onInput={(v) => setStatus(v as TaskStatus)}
          />
        )}
        <Field
          id="task-description"
          label="Description (optional)"
          kind="textarea"
          error={errors.description}
          value={description}
          onInput={setDescription}
        />
        <Field
          id="task-branch_name"
          label="Git branch (optional)"
          error={errors.branch_name}
          value={branch}
          onInput={setBranch}
        />
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : editing ? 'Save changes' : 'Create task'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function AssignDialog(props: { task: Task; onClose: () => void; onSaved: (task: Task) => void }) {
  const [agents, setAgents] = useState<Agent[] | null>(null);
  const [agentId, setAgentId] = useState(props.task.assigned_agent_id ?? '');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    void readAll(async (limit, offset) => {
      const { data, error: failed } = await api.GET('/api/agents', {
        params: { query: { project_id: props.task.project_id, limit, offset } },
      });
      return data ? { rows: data.agents, total: data.total } : { error: failed };
    }).then((got) => {
      if (Array.isArray(got)) {
        setAgents(got);
        if (!agentId && got[0]) setAgentId(got[0].id);
      } else setError(problem(got.error).message);
    });
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    if (!agentId) return;
    setBusy(true);
    setError(null);
    const { data, error: failed } = await api.POST('/api/tasks/{id}/assign', {
      params: { path: { id: props.task.id } },
      body: { agent_id: agentId },
    });
    setBusy(false);
    if (data) props.onSaved(data);
    else setError(problem(failed).message);
  }

  return (
    <Dialog title={`Assign “${props.task.title}”`} onClose={props.onClose}>
      <form class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="assign-error" message={error} />
        {!agents ? (
          <p class="muted" role="status">
            Loading the project's agents…
          </p>
        ) : agents.length === 0 ? (
          <p>
            No agents in this project yet. <a href="/agents">Spawn one on the Agents page</a>.
          </p>
        ) : (
          <FieldFrame id="assign-agent" label="Agent">
            {(aria) => (
              <select {...aria} value={agentId} data-autofocus onChange={(e) => setAgentId(e.currentTarget.value)}>
                {agents.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name} ({a.role}, {a.status})
                  </option>
                ))}
              </select>
            )}
          </FieldFrame>
        )}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" disabled={busy || !agents?.length}>
            {busy ? 'Assigning…' : 'Assign'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
