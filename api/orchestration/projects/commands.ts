// The projects slice's application layer (the only caller of the command runner for it): create
// (the caller becomes the owner) and change (its owner or an admin: decided here, and only here).

import { randomUUID } from 'node:crypto';
import { MAX_CONCURRENT, projectDecider, projectNotFound } from '../../../domain/orchestration/projects/decider.ts';
import type { ProjectFields } from '../../../domain/orchestration/projects/events.ts';
import { projectStream } from '../../../domain/orchestration/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { projectById, type ProjectRow } from '../../../projections/orchestration/projects.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { roleOf, type SignedIn } from '../auth/guards.ts';
import type { OrchDeps } from '../deps.ts';

type Deps = Pick<OrchDeps, 'commands' | 'db' | 'clock'>;

/** The project a request names (a UUID: its route checks the shape): 404 `project_not_found` (the decider's) when there is none. */
export async function projectOf(deps: Pick<OrchDeps, 'db'>, id: string): Promise<ProjectRow> {
  const project = await projectById(deps.db, id);
  if (!project) throw projectNotFound();
  return project;
}

export async function createProject(
  deps: Deps,
  principal: SignedIn,
  body: { name: string; repo_path?: string | null; max_concurrent_agents?: number },
  context: CommandContext,
): Promise<ProjectRow> {
  const id = randomUUID();
  await deps.commands.run(
    projectStream(id),
    projectDecider,
    {
      type: 'CreateProject',
      project_id: id,
      owner_id: principal.user.id,
      fields: {
        name: body.name,
        repo_path: body.repo_path ?? null,
        max_concurrent_agents: body.max_concurrent_agents ?? MAX_CONCURRENT.default,
      },
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return (await projectById(deps.db, id))!;
}

/** Change a project: 404 when there is none, then 403 `project_owner_required` unless the caller owns it or is an admin. */
export async function updateProject(
  deps: Deps,
  principal: SignedIn,
  id: string,
  changes: Partial<ProjectFields>,
  context: CommandContext,
): Promise<ProjectRow> {
  const project = await projectOf(deps, id);
  if (roleOf(principal) !== 'admin' && project.owner_id !== principal.user.id) {
    throw new ApiError(403, 'project_owner_required', "only the project's owner or an admin can change it");
  }
  await deps.commands.run(
    projectStream(project.id),
    projectDecider,
    { type: 'UpdateProject', changes, at: deps.clock.now().toISOString() },
    context,
  );
  return (await projectById(deps.db, project.id))!;
}
