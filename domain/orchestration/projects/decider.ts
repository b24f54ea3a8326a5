// The project aggregate (`orch.project-<uuid>`): created by a key holder who becomes its owner, then
// changed by its owner or an admin (the API checks who; this module checks what).

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { ProjectFields, ProjectEvent } from './events.ts';

export const MAX_CONCURRENT = { min: 1, max: 100, default: 3 } as const;

/** The one not-found of a project, here and in the slice's commands. */
export const projectNotFound = () => new DomainError('not_found', 'project_not_found', 'no such project');

export type ProjectCommand =
  | { type: 'CreateProject'; project_id: string; owner_id: string; fields: ProjectFields; at: string }
  | { type: 'UpdateProject'; changes: Partial<ProjectFields>; at: string };

export type ProjectState = { exists: false } | ({ exists: true; project_id: string; owner_id: string } & ProjectFields);

function evolve(state: ProjectState, event: ProjectEvent): ProjectState {
  switch (event.type) {
    case 'ProjectCreated': {
      const { project_id, owner_id, name, repo_path, max_concurrent_agents } = event.data;
      return { exists: true, project_id, owner_id, name, repo_path, max_concurrent_agents };
    }
    case 'ProjectUpdated': {
      if (!state.exists) return state;
      const { project_id: _id, at: _at, ...changes } = event.data;
      return { ...state, ...changes };
    }
  }
}

function decide(command: ProjectCommand, state: ProjectState): ProjectEvent[] {
  switch (command.type) {
    case 'CreateProject':
      if (state.exists) throw new DomainError('conflict', 'project_exists', 'project already exists');
      return [
        {
          type: 'ProjectCreated',
          data: { project_id: command.project_id, owner_id: command.owner_id, ...command.fields, at: command.at },
        },
      ];
    case 'UpdateProject': {
      if (!state.exists) throw projectNotFound();
      const changed: Partial<ProjectFields> = {};
      for (const key of ['name', 'repo_path', 'max_concurrent_agents'] as const) {
        const value = command.changes[key];
        if (value !== undefined && value !== state[key]) (changed as Record<string, unknown>)[key] = value;
      }
      if (Object.keys(changed).length === 0) return [];
      return [{ type: 'ProjectUpdated', data: { project_id: state.project_id, ...changed, at: command.at } }];
    }
  }
}

export const projectDecider: Decider<ProjectState, ProjectCommand, ProjectEvent> = {
  initialState: () => ({ exists: false }),
  evolve,
  decide,
};
