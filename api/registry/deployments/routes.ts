// Deployments: list (filter by product and channel), register, read one, update (version,
// last-seen, endpoint, channel), and a customer's deployments.

import { randomUUID } from 'node:crypto';
import { createRoute, z } from '@hono/zod-openapi';
import { deploymentDecider } from '../../../domain/registry/deployments/decider.ts';
import { deploymentStream } from '../../../domain/registry/deployments/events.ts';
import { customerBySlug } from '../../../projections/registry/customers.ts';
import { deploymentById, listDeployments } from '../../../projections/registry/deployments.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { actorOf } from '../auth/principal.ts';
import { LIST_PAGE } from '../customers/routes.ts';
import { SlugParam } from '../customers/schemas.ts';
import { liveCustomer } from '../customers/use-cases.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, BODY_ERRORS, registryErrors, registryRouter } from '../router.ts';
import { CreateDeploymentBody, Deployment, DeploymentPage, DeploymentQuery, IdParam, PatchDeploymentBody } from './schemas.ts';

const tags = ['deployments'];

/** The referenced customer of a new deployment or subscription: 422 naming the slug when there is none. */
export async function referencedCustomer(deps: Pick<RegistryDeps, 'db'>, slug: string) {
  const customer = await customerBySlug(deps.db, slug);
  if (!customer) throw new ApiError(422, 'unknown_customer', `customer_slug: no customer with slug ${slug}`, { field: 'customer_slug', customer_slug: slug });
  return customer;
}

const uuid = (id: string) => z.uuid().safeParse(id).success;

export function deploymentRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const read = access(deps, { scope: 'deployments:read' });
  const write = access(deps, { scope: 'deployments:write' });

  async function existing(id: string) {
    const deployment = uuid(id) ? await deploymentById(deps.db, id) : null;
    if (!deployment) throw new ApiError(404, 'deployment_not_found', 'no such deployment');
    return deployment;
  }

  app.openapi(createRoute({
    method: 'get', path: '/api/v1/deployments', tags, summary: 'List deployments (filter by product, channel)', middleware: [read] as const,
    request: { query: pageQuery(LIST_PAGE).extend(DeploymentQuery.shape) },
    responses: { 200: ok(DeploymentPage, 'a page of deployments'), ...registryErrors({ ...AUTH_ERRORS, 422: 'unknown product or channel' }) },
  }), async (c) => {
    const q = c.req.valid('query');
    const { rows, total } = await listDeployments(deps.db, { product: q.product, channel: q.channel }, q);
    return c.json(page('items', rows, total, q), 200);
  });

  app.openapi(createRoute({
    method: 'post', path: '/api/v1/deployments', tags, summary: 'Register a deployment (product from the built-in catalog; channel defaults to stable)',
    middleware: [write] as const,
    request: { body: jsonBody(CreateDeploymentBody) },
    responses: { 201: ok(Deployment, 'the deployment'), ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, 422: 'validation_failed, or unknown_customer naming customer_slug' }) },
  }), async (c) => {
    const body = c.req.valid('json');
    const customer = await referencedCustomer(deps, body.customer_slug);
    const id = randomUUID();
    const at = deps.clock.now().toISOString();
    await deps.commands.run(deploymentStream(id), deploymentDecider, {
      type: 'RegisterDeployment', at,
      ref: { deployment_id: id, customer_id: customer.id, customer_slug: customer.slug, product: body.product },
      fields: {
        version: body.version, channel: body.channel ?? 'stable', endpoint_url: body.endpoint_url ?? null, instance_id: body.instance_id ?? null,
        first_deployed_at: body.first_deployed_at ? new Date(body.first_deployed_at).toISOString() : at,
        last_seen_at: body.last_seen_at ? new Date(body.last_seen_at).toISOString() : null,
      },
    }, actorOf(c));
    return c.json((await deploymentById(deps.db, id))!, 201);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/v1/deployments/{id}', tags, summary: 'One deployment', middleware: [read] as const,
    request: { params: IdParam },
    responses: { 200: ok(Deployment, 'the deployment'), ...registryErrors({ ...AUTH_ERRORS, 404: 'deployment_not_found' }) },
  }), async (c) => c.json(await existing(c.req.valid('param').id), 200));

  app.openapi(createRoute({
    method: 'patch', path: '/api/v1/deployments/{id}', tags, summary: 'Update version, last_seen_at, endpoint_url or channel', middleware: [write] as const,
    request: { params: IdParam, body: jsonBody(PatchDeploymentBody) },
    responses: { 200: ok(Deployment, 'the deployment as changed'), ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, 404: 'deployment_not_found' }) },
  }), async (c) => {
    const deployment = await existing(c.req.valid('param').id);
    const body = c.req.valid('json');
    const patch = {
      ...body,
      ...(body.last_seen_at ? { last_seen_at: new Date(body.last_seen_at).toISOString() } : {}),
    };
    await deps.commands.run(deploymentStream(deployment.id), deploymentDecider, { type: 'UpdateDeployment', patch, at: deps.clock.now().toISOString() }, actorOf(c));
    return c.json((await deploymentById(deps.db, deployment.id))!, 200);
  });

  app.openapi(createRoute({
    method: 'get', path: '/api/v1/customers/{slug}/deployments', tags, summary: 'A customer\'s deployments', middleware: [access(deps, { scope: 'customers:read' })] as const,
    request: { params: SlugParam, query: pageQuery(LIST_PAGE).extend(DeploymentQuery.shape) },
    responses: { 200: ok(DeploymentPage, 'a page of deployments'), ...registryErrors({ ...AUTH_ERRORS, 404: 'customer_not_found', 422: 'unknown product or channel' }) },
  }), async (c) => {
    const customer = await liveCustomer(deps, c.req.valid('param').slug);
    const q = c.req.valid('query');
    const { rows, total } = await listDeployments(deps.db, { customer_id: customer.id, product: q.product, channel: q.channel }, q);
    return c.json(page('items', rows, total, q), 200);
  });

  return app;
}
