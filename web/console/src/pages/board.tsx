// A project's board (/projects/:id): its tasks in the six status columns.
//
// - Moving a card (drag and drop, the keyboard, or its "Move to" menu) changes its status at once
//   and sends PATCH /api/tasks/{id} {status}; a refusal (403 without authority over the task, 409
//   while dependencies are incomplete) puts it back and says the server's message in a toast.
// - Keyboard: Space on a card lifts it, the arrow keys carry it between columns, Space drops it,
//   Escape cancels; each step is announced in the polite live region.
// - Live: task events on /ws move, add, change and remove cards (folded as the projection does,
//   work-events.ts), so two browsers see each other.
// - Create, edit and assign dialogs (task-dialogs.tsx). Readonly accounts see no write controls.

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api } from '../api/client.ts';
import { connected, listen, type LogEvent } from '../live.ts';
import { LoadFailed, Loading, Page } from '../page.tsx';
import { role } from '../session.ts';
import { problem } from '../ui/errors.ts';
import { announce, toast } from '../ui/toast.tsx';
import { AssignDialog, TaskDialog } from './task-dialogs.tsx';
import { applyProjectEvent, applyTaskEvent } from './work-events.ts';
import { COLUMNS, readAll, statusLabel, type Project, type Task, type TaskStatus } from './work.ts';
import './board.css';
import { handler } from '../ui/handler.ts';

interface Lifted {
  id: string;
  from: TaskStatus;
  at: TaskStatus;
}
type DialogState =
  { kind: 'create'; status: TaskStatus } | { kind: 'edit'; task: Task } | { kind: 'assign'; task: Task } | null;

const handleId = (taskId: string) => `card-${taskId}`;

function Card(props: {
  task: Task;
  canWrite: boolean;
  lifted: boolean;
  onKey: (event: KeyboardEvent, task: Task) => void;
  onBlur: () => void;
  onMove: (task: Task, to: TaskStatus) => void;
  onEdit: (task: Task) => void;
  onAssign: (task: Task) => void;
}) {
  const { task, canWrite } = props;
  return (
    <li
      class={`card priority-${task.priority}${props.lifted ? ' lifted' : ''}`}
      draggable={canWrite}
      data-task-id={task.id}
      onDragStart={(e) => {
        e.dataTransfer?.setData('text/plain', task.id);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
      }}
    >
      {canWrite ? (
        <button
          type="button"
          id={handleId(task.id)}
          class="card-title"
          aria-describedby="board-help"
          aria-pressed={props.lifted}
          onKeyDown={(e) => props.onKey(e, task)}
          onKeyUp={(e) => e.key === ' ' && e.preventDefault()}
          onBlur={props.onBlur}
          onClick={(e) => {
            if (e.detail > 0 || !props.lifted) props.onEdit(task);
          }}
        >
          {task.title}
        </button>
      ) : (
        <span class="card-title">{task.title}</span>
      )}
      <span class="card-meta">
        <span class="priority">{task.priority}</span>
        {task.assigned_agent_id && <span> · assigned</span>}
        {task.branch_name && <span> · {task.branch_name}</span>}
      </span>
      {canWrite && (
        <span class="card-actions">
          <label>
            <span class="visually-hidden">Move “{task.title}” to</span>
            <select value={task.status} onChange={(e) => props.onMove(task, e.currentTarget.value as TaskStatus)}>
              {COLUMNS.map((c) => (
                <option key={c.status} value={c.status}>
                  {c.status === task.status ? `${c.label} (now)` : `Move to ${c.label}`}
                </option>
              ))}
            </select>
          </label>
          <button type="button" class="secondary small" onClick={() => props.onAssign(task)}>
            Assign<span class="visually-hidden"> “{task.title}”</span>
          </button>
        </span>
      )}
    </li>
  );
}

export function Board() {
  const { params } = useRoute();
  const projectId = params.id!;
  const [project, setProject] = useState<Project | null>(null);
  const [tasks, setTasks] = useState<Task[] | null>(null);
  const [error, setError] = useState<ReturnType<typeof problem> | null>(null);
  const [lifted, setLifted] = useState<Lifted | null>(null);
  const [dropTarget, setDropTarget] = useState<TaskStatus | null>(null);
  const [dialog, setDialog] = useState<DialogState>(null);
  const canWrite = role.value === 'user' || role.value === 'admin';
  const tasksRef = useRef<Task[]>([]);
  /** The card whose title button keeps the keyboard focus through its next re-render (it moves between lists). */
  const refocus = useRef<string | null>(null);
  tasksRef.current = tasks ?? [];

  const upsert = (task: Task) =>
    setTasks((list) =>
      (list ?? []).some((t) => t.id === task.id)
        ? (list ?? []).map((t) => (t.id === task.id ? task : t))
        : [...(list ?? []), task],
    );
  const setStatus = (id: string, status: TaskStatus) =>
    setTasks((list) => (list ?? []).map((t) => (t.id === id ? { ...t, status } : t)));

  async function load() {
    const [p, all] = await Promise.all([
      api.GET('/api/projects/{id}', { params: { path: { id: projectId } } }),
      readAll(async (limit, offset) => {
        const { data, error: failed } = await api.GET('/api/tasks', {
          params: { query: { project_id: projectId, limit, offset } },
        });
        return data ? { rows: data.tasks, total: data.total } : { error: failed };
      }),
    ]);
    if (!p.data) return setError(problem(p.error));
    if (!Array.isArray(all)) return setError(problem(all.error));
    setProject(p.data);
    setTasks(all);
    setError(null);
  }

  function onEvent(event: LogEvent) {
    if (event.stream === `orch.project-${projectId}`)
      setProject((p) => (p ? (applyProjectEvent([p], event)[0] ?? p) : p));
    else setTasks((list) => (list ? applyTaskEvent(list, event, projectId) : list));
  }

  useEffect(() => {
    void load();
    return listen(onEvent);
  }, [projectId]);

  // A card moved by the keyboard re-renders in another column: keep the focus on it.
  useLayoutEffect(() => {
    if (!refocus.current) return;
    document.getElementById(handleId(refocus.current))?.focus();
    refocus.current = null;
  });

  async function move(task: Task, to: TaskStatus) {
    const from = task.status;
    if (from === to) return;
    setStatus(task.id, to);
    const { data, error: failed } = await api.PATCH('/api/tasks/{id}', {
      params: { path: { id: task.id } },
      body: { status: to },
    });
    if (data) {
      upsert(data);
      announce(`Moved “${task.title}” to ${statusLabel(to)}.`);
      return;
    }
    // Put it back, unless something else has moved it since.
    if (document.activeElement?.id === handleId(task.id)) refocus.current = task.id;
    setTasks((list) => (list ?? []).map((t) => (t.id === task.id && t.status === to ? { ...t, status: from } : t)));
    toast(`Could not move “${task.title}” to ${statusLabel(to)}: ${problem(failed).message}`, 'error');
  }

  function onKey(event: KeyboardEvent, task: Task) {
    const index = (status: TaskStatus) => COLUMNS.findIndex((c) => c.status === status);
    refocus.current = task.id;
    if (event.key === ' ' || event.key === 'Spacebar') {
      event.preventDefault();
      if (!lifted || lifted.id !== task.id) {
        setLifted({ id: task.id, from: task.status, at: task.status });
        announce(
          `Lifted “${task.title}” in ${statusLabel(task.status)}. Left and right arrows move it, Space drops it, Escape cancels.`,
        );
        return;
      }
      setLifted(null);
      if (lifted.at === lifted.from) announce(`Dropped “${task.title}” back in ${statusLabel(lifted.from)}.`);
      else void move(task, lifted.at);
      return;
    }
    if (!lifted || lifted.id !== task.id) return;
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      setLifted(null);
      announce(`Move cancelled; “${task.title}” stays in ${statusLabel(lifted.from)}.`);
      return;
    }
    const step =
      event.key === 'ArrowLeft' || event.key === 'ArrowUp'
        ? -1
        : event.key === 'ArrowRight' || event.key === 'ArrowDown'
          ? 1
          : 0;
    if (!step) return;
    event.preventDefault();
    const next = COLUMNS[index(lifted.at) + step];
    if (!next) {
      announce(`${statusLabel(lifted.at)} is the ${step < 0 ? 'first' : 'last'} column.`);
      return;
    }
    setLifted({ ...lifted, at: next.status });
    announce(`${next.label}, column ${index(next.status) + 1} of ${COLUMNS.length}.`);
  }

  function onBlur() {
    // Tabbing away from a lifted card puts it back (its re-render in another column keeps focus).
    setTimeout(() => {
      setLifted((current) => {
        if (current && document.activeElement?.id !== handleId(current.id)) {
          announce('Move cancelled.');
          return null;
        }
        return current;
      });
    }, 0);
  }

  function drop(event: DragEvent, status: TaskStatus) {
    event.preventDefault();
    setDropTarget(null);
    const id = event.dataTransfer?.getData('text/plain');
    const task = tasksRef.current.find((t) => t.id === id);
    if (task) void move(task, status);
  }

  if (error) {
    return (
      <Page title="Board">
        <LoadFailed error={error} retry={handler(load)} />
      </Page>
    );
  }
  const shown = (t: Task) => (lifted?.id === t.id ? lifted.at : t.status);
  return (
    <Page
      title={project ? `Board: ${project.name}` : 'Board'}
      actions={
        canWrite &&
        project && (
          <button type="button" onClick={() => setDialog({ kind: 'create', status: 'backlog' })}>
            New task
          </button>
        )
      }
    >
      <p class="board-bar">
        <a href="/projects">All projects</a>
        <span class="live-state">{connected.value ? 'Live: up to date' : 'Live: connecting…'}</span>
      </p>
      {canWrite && (
        <p id="board-help" class="muted">
          Drag a card to a column, or focus its title and press Space to lift it, the arrow keys to move it, Space to
          drop it and Escape to cancel. Enter edits it.
        </p>
      )}
      {!tasks || !project ? (
        <Loading />
      ) : (
        <div class="board">
          {COLUMNS.map((column) => {
            const cards = tasks.filter((t) => shown(t) === column.status);
            return (
              <section
                key={column.status}
                class={`column${dropTarget === column.status ? ' drop-target' : ''}`}
                aria-labelledby={`col-${column.status}`}
                data-status={column.status}
                onDragOver={(e) => {
                  if (!canWrite) return;
                  e.preventDefault();
                  if (dropTarget !== column.status) setDropTarget(column.status);
                }}
                onDragLeave={() => setDropTarget((s) => (s === column.status ? null : s))}
                onDrop={(e) => drop(e, column.status)}
              >
                <h2 id={`col-${column.status}`}>
                  {column.label} <span class="count">({cards.length})</span>
                </h2>
                <ul class="cards">
                  {cards.map((t) => (
                    <Card
                      key={t.id}
                      task={t}
                      canWrite={canWrite}
                      lifted={lifted?.id === t.id}
                      onKey={onKey}
                      onBlur={onBlur}
                      onMove={handler(move)}
                      onEdit={(task) => setDialog({ kind: 'edit', task })}
                      onAssign={(task) => setDialog({ kind: 'assign', task })}
                    />
                  ))}
                </ul>
              </section>
            );
          })}
        </div>
      )}
      {dialog?.kind === 'create' || dialog?.kind === 'edit' ? (
        <TaskDialog
          projectId={projectId}
          task={dialog.kind === 'edit' ? dialog.task : undefined}
          status={dialog.kind === 'create' ? dialog.status : undefined}
          onClose={() => setDialog(null)}
          onSaved={(task) => {
            upsert(task);
            toast(
              dialog.kind === 'edit'
                ? `Saved “${task.title}”.`
                : `Created “${task.title}” in ${statusLabel(task.status)}.`,
            );
            setDialog(null);
          }}
        />
      ) : dialog?.kind === 'assign' ? (
        <AssignDialog
          task={dialog.task}
          onClose={() => setDialog(null)}
          onSaved={(task) => {
            upsert(task);
            toast(`Assigned “${task.title}”.`);
            setDialog(null);
          }}
        />
      ) : null}
    </Page>
  );
}
