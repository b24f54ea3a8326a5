// Subscriptions: list (filter by status, product), create, read one, update (status, mrr_cents,
// renewal_date: revenue changes over time), and a customer's subscriptions.

import { createRoute } from '@hono/zod-openapi';
import { listSubscriptions } from '../../../projections/registry/subscriptions.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { actorOf } from '../auth/principal.ts';
import { LIST_PAGE } from '../customers/routes.ts';
import { SlugParam } from '../customers/schemas.ts';
import { liveCustomer } from '../customers/commands.ts';
import { IdParam } from '../deployments/schemas.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, BODY_ERRORS, registryErrors, registryRouter } from '../router.ts';
import { createSubscription, existingSubscription, updateSubscription } from './commands.ts';
import {
  CreateSubscriptionBody,
  PatchSubscriptionBody,
  Subscription,
  SubscriptionPage,
  SubscriptionQuery,
} from './schemas.ts';

const tags = ['subscriptions'];

export function subscriptionRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const read = access(deps, { scope: 'subscriptions:read' });
  const write = access(deps, { scope: 'subscriptions:write' });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/subscriptions',
      tags,
      summary: 'List subscriptions (filter by status, product)',
      middleware: [read] as const,
      request: { query: pageQuery(LIST_PAGE).extend(SubscriptionQuery.shape) },
      responses: {
        200: ok(SubscriptionPage, 'a page of subscriptions'),
        ...registryErrors({ ...AUTH_ERRORS, 422: 'unknown status or product' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await listSubscriptions(deps.db, { status: q.status, product: q.product }, q);
      return c.json(page('items', rows, total, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/subscriptions',
      tags,
      summary: 'Create a subscription (status defaults to trialing, mrr_cents to 0)',
      middleware: [write] as const,
      request: { body: jsonBody(CreateSubscriptionBody) },
      responses: {
        201: ok(Subscription, 'the subscription'),
        ...registryErrors({
          ...AUTH_ERRORS,
          ...BODY_ERRORS,
          422: 'validation_failed (mrr_cents a non-negative integer), or unknown_customer',
        }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      return c.json(
        await createSubscription(
          deps,
          {
            customer_slug: body.customer_slug,
            product: body.product,
            status: body.status ?? 'trialing',
            mrr_cents: body.mrr_cents ?? 0,
            renewal_date: body.renewal_date ?? null,
            stripe_customer_id: body.stripe_customer_id ?? null,
            stripe_subscription_id: body.stripe_subscription_id ?? null,
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
      path: '/api/v1/subscriptions/{id}',
      tags,
      summary: 'One subscription',
      middleware: [read] as const,
      request: { params: IdParam },
      responses: {
        200: ok(Subscription, 'the subscription'),
        ...registryErrors({ ...AUTH_ERRORS, 404: 'subscription_not_found' }),
      },
    }),
    async (c) => c.json(await existingSubscription(deps, c.req.valid('param').id), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/v1/subscriptions/{id}',
      tags,
      summary: 'Update status, mrr_cents or renewal_date',
      middleware: [write] as const,
      request: { params: IdParam, body: jsonBody(PatchSubscriptionBody) },
      responses: {
        200: ok(Subscription, 'the subscription as changed'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, 404: 'subscription_not_found' }),
      },
    }),
    async (c) => {
      return c.json(await updateSubscription(deps, c.req.valid('param').id, c.req.valid('json'), actorOf(c)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/customers/{slug}/subscriptions',
      tags,
      summary: "A customer's subscriptions",
      middleware: [access(deps, { scope: 'customers:read' })] as const,
      request: { params: SlugParam, query: pageQuery(LIST_PAGE).extend(SubscriptionQuery.shape) },
      responses: {
        200: ok(SubscriptionPage, 'a page of subscriptions'),
        ...registryErrors({ ...AUTH_ERRORS, 404: 'customer_not_found', 422: 'unknown status or product' }),
      },
    }),
    async (c) => {
      const customer = await liveCustomer(deps, c.req.valid('param').slug);
      const q = c.req.valid('query');
      const { rows, total } = await listSubscriptions(
        deps.db,
        { customer_id: customer.id, status: q.status, product: q.product },
        q,
      );
      return c.json(page('items', rows, total, q), 200);
    },
  );

  return app;
}
