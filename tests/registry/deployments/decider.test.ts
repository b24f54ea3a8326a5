// The deployment decider, given/when/then: registered once; a PATCH records only what changes.

import { suite } from 'uvu';
import { deploymentDecider } from '../../../domain/registry/deployments/decider.ts';
import type { DeploymentEvent, DeploymentFields } from '../../../domain/registry/deployments/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const ref = { deployment_id: 'd1', customer_id: 'c1', customer_slug: 'acme', product: 'chat' as const };
const fields: DeploymentFields = {
  version: '1.0.0',
  channel: 'stable',
  endpoint_url: null,
  instance_id: null,
  first_deployed_at: at,
  last_seen_at: null,
};
const registered: DeploymentEvent = { type: 'DeploymentRegistered', data: { ...ref, ...fields, at } };
const deployment = spec(deploymentDecider);
const test = suite('domain: registry deployments');

test('RegisterDeployment on a new stream registers; a second time is deployment_exists', () => {
  deployment([]).when({ type: 'RegisterDeployment', ref, fields, at }).then([registered]);
  deployment([registered]).when({ type: 'RegisterDeployment', ref, fields, at }).thenError('deployment_exists');
});

test('UpdateDeployment records only the changed fields; nothing when nothing changes; 404 before registration', () => {
  deployment([registered])
    .when({ type: 'UpdateDeployment', patch: { version: '1.1.0', channel: 'stable' }, at })
    .then([
      { type: 'DeploymentUpdated', data: { ...ref, changes: { version: { before: '1.0.0', after: '1.1.0' } }, at } },
    ]);
  deployment([registered])
    .when({ type: 'UpdateDeployment', patch: { version: '1.0.0' }, at })
    .then([]);
  // The fold applies earlier updates: the same version again is no change.
  const updated: DeploymentEvent = {
    type: 'DeploymentUpdated',
    data: { ...ref, changes: { version: { before: '1.0.0', after: '1.1.0' } }, at },
  };
  deployment([registered, updated])
    .when({ type: 'UpdateDeployment', patch: { version: '1.1.0' }, at })
    .then([]);
  deployment([])
    .when({ type: 'UpdateDeployment', patch: { version: '2.0.0' }, at })
    .thenError('deployment_not_found');
});

test.run();
