// Projects (GET /api/projects): the list, each name a link to its board; create and edit in a
// dialog (PATCH sends only what changed; the owner or an admin may, the server says so when not).
// The list follows the log: project events on /ws are folded in (work-events.ts). Readonly accounts see no write
// controls (the server refuses them anyway).

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client.ts';
import { listen } from '../live.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';
import { role } from '../session.ts';
import { Dialog } from '../ui/dialog.tsx';
import { problem, serverErrors, type FieldErrors } from '../ui/errors.ts';
import { Field, FieldFrame, FormError, focusFirstError } from '../ui/field.tsx';
import { toast } from '../ui/toast.tsx';
import { applyProjectEvent } from './work-events.ts';
import { readAll, type Project } from './work.ts';
import { handler } from '../ui/handler.ts';

const MAX_AGENTS = { min: 1, max: 50 };

export async function loadProjects(): Promise<Project[] | { error: unknown }> {
  return readAll(async (limit, offset) => {
    const { data, error } = await api.GET('/api/projects', { params: { query: { limit, offset } } });
    return data ? { rows: data.projects, total: data.total } : { error };
  });
}

function ProjectDialog(props: { project?: Project; onClose: () => void; onSaved: (p: Project) => void }) {
  const editing = props.project;
  const admin = role.value === 'admin';
  const [name, setName] = useState(editing?.name ?? '');
  const [repoPath, setRepoPath] = useState(editing?.repo_path ?? '');
  const [maxAgents, setMaxAgents] = useState(String(editing?.max_concurrent_agents ?? 3));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  function check(): FieldErrors {
    const found: FieldErrors = {};
    if (!name.trim()) found.name = 'Give the project a name.';
    else if (name.trim().length > 200) found.name = 'At most 200 characters.';
    const n = Number(maxAgents);
    if (!Number.isInteger(n) || n < MAX_AGENTS.min || n > MAX_AGENTS.max)
      found.max_concurrent_agents = `A whole number from ${MAX_AGENTS.min} to ${MAX_AGENTS.max}.`;
    return found;
  }

  async function submit(event: Event) {
    event.preventDefault();
    const found = check();
    setErrors(found);
    setFormError(null);
    const form = event.currentTarget as HTMLFormElement;
    if (Object.keys(found).length) {
      focusFirstError(form, 'project-error');
      return;
    }
    const fields = {
      name: name.trim(),
      max_concurrent_agents: Number(maxAgents),
      ...(admin && repoPath.trim() ? { repo_path: repoPath.trim() } : {}),
    };
    setBusy(true);
    const result = editing
      ? await api.PATCH('/api/projects/{id}', {
          params: { path: { id: editing.id } },
          body: Object.fromEntries(
            Object.entries(fields).filter(([k, v]) => (editing as Record<string, unknown>)[k] !== v),
          ),
        })
      : await api.POST('/api/projects', { body: fields });
    setBusy(false);
    if (result.data) {
      props.onSaved(result.data);
      return;
    }
    const mapped = serverErrors(problem(result.error), ['name', 'repo_path', 'max_concurrent_agents']);
    setErrors(mapped.fields);
    setFormError(mapped.form);
    focusFirstError(form, 'project-error');
  }

  return (
    <Dialog title={editing ? `Edit project ${editing.name}` : 'New project'} onClose={props.onClose}>
      <form class="form" onSubmit={handler(submit)} noValidate>
        <FormError id="project-error" message={formError} />
        <FieldFrame id="project-name" label="Name" error={errors.name}>
          {(aria) => (
            <input
              {...aria}
              value={name}
              data-autofocus
              required
              maxLength={200}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          )}
        </FieldFrame>
        {admin && (
          <Field
            id="project-repo_path"
            label="Repository path (optional)"
            hint="A git repository on the runner's host; agents get a worktree of it. Shown to admins only."
            error={errors.repo_path}
            value={repoPath}
            onInput={setRepoPath}
          />
        )}
        <FieldFrame
          id="project-max_concurrent_agents"
          label="Agents running at once"
          hint={`${MAX_AGENTS.min} to ${MAX_AGENTS.max}`}
          error={errors.max_concurrent_agents}
        >
          {(aria) => (
            <input
              {...aria}
              type="number"
              inputMode="numeric"
              min={MAX_AGENTS.min}
              max={MAX_AGENTS.max}
              value={maxAgents}
              onInput={(e) => setMaxAgents(e.currentTarget.value)}
            />
          )}
        </FieldFrame>
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : editing ? 'Save changes' : 'Create project'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

export function Projects() {
  const [projects, setProjects] = useState<Project[] | null>(null);
  const [error, setError] = useState<ReturnType<typeof problem> | null>(null);
  const [dialog, setDialog] = useState<{ project?: Project } | null>(null);
  const canWrite = role.value === 'user' || role.value === 'admin';
  const admin = role.value === 'admin';

  async function load() {
    const got = await loadProjects();
    if (Array.isArray(got)) {
      setProjects(got);
      setError(null);
    } else setError(problem(got.error));
  }
  useEffect(() => {
    void load();
    return listen((event) => setProjects((list) => (list ? applyProjectEvent(list, event) : list)));
  }, []);

  function saved(project: Project) {
    setProjects((list) =>
      (list ?? []).some((p) => p.id === project.id)
        ? (list ?? []).map((p) => (p.id === project.id ? project : p))
        : [...(list ?? []), project],
    );
    toast(dialog?.project ? `Saved project ${project.name}.` : `Created project ${project.name}.`);
    setDialog(null);
  }

  return (
    <Page
      title="Projects"
      actions={
        canWrite && (
          <button type="button" onClick={() => setDialog({})}>
            New project
          </button>
        )
      }
    >
      {error ? (
        <LoadFailed error={error} retry={handler(load)} />
      ) : !projects ? (
        <Loading />
      ) : projects.length === 0 ? (
        <p>No projects yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Projects; open one for its board of tasks</caption>
            <thead>
              <tr>
                <th scope="col">Project</th>
                <th scope="col" class="num">
                  Agents at once
                </th>
                {admin && <th scope="col">Repository path</th>}
                <th scope="col">Created</th>
                {canWrite && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {projects.map((p) => (
                <tr key={p.id}>
                  <th scope="row">
                    <a href={`/projects/${p.id}`}>{p.name}</a>
                  </th>
                  <td class="num">{p.max_concurrent_agents}</td>
                  {admin && <td>{p.repo_path ?? '—'}</td>}
                  <td>{new Date(p.created_at).toLocaleDateString()}</td>
                  {canWrite && (
                    <td>
                      <button type="button" class="secondary" onClick={() => setDialog({ project: p })}>
                        Edit<span class="visually-hidden"> {p.name}</span>
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {dialog && <ProjectDialog project={dialog.project} onClose={() => setDialog(null)} onSaved={saved} />}
    </Page>
  );
}
