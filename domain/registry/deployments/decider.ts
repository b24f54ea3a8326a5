// The deployment aggregate (`registry.deployment-<uuid>`): who runs which product at which version, on
// which channel. It references its customer by id and slug (a slug never changes).

import { DomainError, type Decider } from '../../shared/decider.ts';
import { applyChanges, diff } from '../catalog.ts';
import type { DeploymentFields, Ref, DeploymentEvent } from './events.ts';

/** What PATCH may change. */
export type DeploymentPatch = Partial<Pick<DeploymentFields, 'version' | 'last_seen_at' | 'endpoint_url' | 'channel'>>;

export type DeploymentCommand =
  | { type: 'RegisterDeployment'; ref: Ref; fields: DeploymentFields; at: string }
  | { type: 'UpdateDeployment'; patch: DeploymentPatch; at: string };

export interface DeploymentState {
  ref: Ref | null;
  fields: DeploymentFields | null;
}

function decide(command: DeploymentCommand, state: DeploymentState): DeploymentEvent[] {
  switch (command.type) {
    case 'RegisterDeployment':
      if (state.ref) throw new DomainError('conflict', 'deployment_exists', 'deployment already exists');
      return [{ type: 'DeploymentRegistered', data: { ...command.ref, ...command.fields, at: command.at } }];
    case 'UpdateDeployment': {
      if (!state.ref || !state.fields) throw new DomainError('not_found', 'deployment_not_found', 'no such deployment');
      const changes = diff(
        state.fields as unknown as Record<string, unknown>,
        command.patch as Record<string, unknown>,
      );
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'DeploymentUpdated', data: { ...state.ref, changes, at: command.at } }];
    }
  }
}

function evolve(state: DeploymentState, event: DeploymentEvent): DeploymentState {
  switch (event.type) {
    case 'DeploymentRegistered': {
      const { deployment_id, customer_id, customer_slug, product, at: _at, ...fields } = event.data;
      return { ref: { deployment_id, customer_id, customer_slug, product }, fields };
    }
    case 'DeploymentUpdated':
      return { ...state, fields: state.fields && applyChanges(state.fields, event.data.changes) };
  }
}

export const deploymentDecider: Decider<DeploymentState, DeploymentCommand, DeploymentEvent> = {
  initialState: () => ({ ref: null, fields: null }),
  evolve,
  decide,
};
