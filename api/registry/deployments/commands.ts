// Deployment commands (the slice's application layer, the only caller of the command runner for
// deployments): register one under an existing customer, update one; and the lookups they need.

import { randomUUID } from 'node:crypto';
import {
  deploymentDecider,
  type DeploymentCommand,
  type DeploymentPatch,
} from '../../../domain/registry/deployments/decider.ts';
import { deploymentStream } from '../../../domain/registry/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { customerBySlug } from '../../../projections/registry/customers.ts';
import { deploymentById, type DeploymentRow } from '../../../projections/registry/deployments.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { isUuid } from '../../shared/params.ts';
import type { RegistryDeps } from '../deps.ts';

type Deps = Pick<RegistryDeps, 'commands' | 'db' | 'clock'>;
type Register = Extract<DeploymentCommand, { type: 'RegisterDeployment' }>;

/** The referenced customer of a new deployment or subscription: 422 naming the slug when there is none. */
export async function referencedCustomer(deps: Pick<RegistryDeps, 'db'>, slug: string) {
  const customer = await customerBySlug(deps.db, slug);
  if (!customer)
    throw new ApiError(422, 'unknown_customer', `customer_slug: no customer with slug ${slug}`, {
      field: 'customer_slug',
      customer_slug: slug,
    });
  return customer;
}

/** A deployment by id, or 404 `deployment_not_found` (an id that is no UUID names none). */
export async function existingDeployment(deps: Pick<RegistryDeps, 'db'>, id: string): Promise<DeploymentRow> {
  const deployment = isUuid(id) ? await deploymentById(deps.db, id) : null;
  if (!deployment) throw new ApiError(404, 'deployment_not_found', 'no such deployment');
  return deployment;
}

/**
 * Register a deployment of `product` for the customer `customer_slug` (422 when there is none);
 * `first_deployed_at` defaults to now.
 */
export async function registerDeployment(
  deps: Deps,
  input: { customer_slug: string; product: Register['ref']['product'] } & Omit<
    Register['fields'],
    'first_deployed_at'
  > & { first_deployed_at: string | null },
  context: CommandContext,
): Promise<DeploymentRow> {
  const customer = await referencedCustomer(deps, input.customer_slug);
  const id = randomUUID();
  const at = deps.clock.now().toISOString();
  await deps.commands.run(
    deploymentStream(id),
    deploymentDecider,
    {
      type: 'RegisterDeployment',
      at,
      ref: { deployment_id: id, customer_id: customer.id, customer_slug: customer.slug, product: input.product },
      fields: {
        version: input.version,
        channel: input.channel,
        endpoint_url: input.endpoint_url,
        instance_id: input.instance_id,
        first_deployed_at: input.first_deployed_at ?? at,
        last_seen_at: input.last_seen_at,
      },
    },
    context,
  );
  return (await deploymentById(deps.db, id))!;
}

/** Update version, last_seen_at, endpoint_url or channel; the deployment as changed. */
export async function updateDeployment(
  deps: Deps,
  id: string,
  patch: DeploymentPatch,
  context: CommandContext,
): Promise<DeploymentRow> {
  const deployment = await existingDeployment(deps, id);
  await deps.commands.run(
    deploymentStream(deployment.id),
    deploymentDecider,
    { type: 'UpdateDeployment', patch, at: deps.clock.now().toISOString() },
    context,
  );
  return (await deploymentById(deps.db, deployment.id))!;
}
