// Deployments: list (filter by product and channel), register, read one, update (version,
// last-seen, endpoint, channel), and a customer's deployments.

import { createRoute } from '@hono/zod-openapi';
import { listDeployments } from '../../../projections/registry/deployments.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { actorOf } from '../auth/principal.ts';
import { LIST_PAGE } from '../customers/routes.ts';
import { SlugParam } from '../customers/schemas.ts';
import { liveCustomer } from '../customers/commands.ts';
import { existingDeployment, registerDeployment, updateDeployment } from './commands.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, BODY_ERRORS, registryErrors, registryRouter } from '../router.ts';
import {
  CreateDeploymentBody,
  Deployment,
  DeploymentPage,
  DeploymentQuery,
  IdParam,
  PatchDeploymentBody,
} from './schemas.ts';

const tags = ['deployments'];

export function deploymentRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const read = access(deps, { scope: 'deployments:read' });
  const write = access(deps, { scope: 'deployments:write' });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/deployments',
      tags,
      summary: 'List deployments (filter by product, channel)',
      middleware: [read] as const,
      request: { query: pageQuery(LIST_PAGE).extend(DeploymentQuery.shape) },
      responses: {
        200: ok(DeploymentPage, 'a page of deployments'),
        ...registryErrors({ ...AUTH_ERRORS, 422: 'unknown product or channel' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await listDeployments(deps.db, { product: q.product, channel: q.channel }, q);
      return c.json(page('items', rows, total, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/deployments',
      tags,
      summary: 'Register a deployment (product from the built-in catalog; channel defaults to stable)',
      middleware: [write] as const,
      request: { body: jsonBody(CreateDeploymentBody) },
      responses: {
        201: ok(Deployment, 'the deployment'),
        ...registryErrors({
          ...AUTH_ERRORS,
          ...BODY_ERRORS,
          422: 'validation_failed, or unknown_customer naming customer_slug',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      return c.json(
        await registerDeployment(
          deps,
          {
            customer_slug: body.customer_slug,
            product: body.product,
            version: body.version,
            channel: body.channel ?? 'stable',
            endpoint_url: body.endpoint_url ?? null,
            instance_id: body.instance_id ?? null,
            first_deployed_at: body.first_deployed_at ? new Date(body.first_deployed_at).toISOString() : null,
            last_seen_at: body.last_seen_at ? new Date(body.last_seen_at).toISOString() : null,
          },
          actorOf(c),
        ),
        201,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/deployments/{id}',
      tags,
      summary: 'One deployment',
      middleware: [read] as const,
      request: { params: IdParam },
      responses: {
        200: ok(Deployment, 'the deployment'),
        ...registryErrors({ ...AUTH_ERRORS, 404: 'deployment_not_found' }),
      },
    }),
    async (c) => c.json(await existingDeployment(deps, c.req.valid('param').id), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/v1/deployments/{id}',
      tags,
      summary: 'Update version, last_seen_at, endpoint_url or channel',
      middleware: [write] as const,
      request: { params: IdParam, body: jsonBody(PatchDeploymentBody) },
      responses: {
        200: ok(Deployment, 'the deployment as changed'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, 404: 'deployment_not_found' }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const patch = {
        ...body,
        ...(body.last_seen_at ? { last_seen_at: new Date(body.last_seen_at).toISOString() } : {}),
      };
      return c.json(await updateDeployment(deps, c.req.valid('param').id, patch, actorOf(c)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/customers/{slug}/deployments',
      tags,
      summary: "A customer's deployments",
      middleware: [access(deps, { scope: 'customers:read' })] as const,
      request: { params: SlugParam, query: pageQuery(LIST_PAGE).extend(DeploymentQuery.shape) },
      responses: {
        200: ok(DeploymentPage, 'a page of deployments'),
        ...registryErrors({ ...AUTH_ERRORS, 404: 'customer_not_found', 422: 'unknown product or channel' }),
      },
    }),
    async (c) => {
      const customer = await liveCustomer(deps, c.req.valid('param').slug);
      const q = c.req.valid('query');
      const { rows, total } = await listDeployments(
        deps.db,
        { customer_id: customer.id, product: q.product, channel: q.channel },
        q,
      );
      return c.json(page('items', rows, total, q), 200);
    },
  );

  return app;
}
