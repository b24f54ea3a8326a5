// Customers: list, create, read with detail, update, delete (interactive admins only; the
// deletion is an event and the history stays), and lead capture.

import { createRoute } from '@hono/zod-openapi';
import type { CustomerFields } from '../../../domain/registry/customers/events.ts';
import { contactsOf, countsOf, listCustomers } from '../../../projections/registry/customers.ts';
import { listDeployments } from '../../../projections/registry/deployments.ts';
import { listSubscriptions } from '../../../projections/registry/subscriptions.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { actorOf } from '../auth/principal.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, BODY_ERRORS, registryErrors, registryRouter } from '../router.ts';
import {
  CreateCustomerBody,
  Customer,
  CustomerDetail,
  CustomerListQuery,
  CustomerPage,
  LeadBody,
  PatchCustomerBody,
  SlugParam,
} from './schemas.ts';
import { captureLead, createCustomer, deleteCustomer, liveCustomer, updateCustomer } from './commands.ts';

export const LIST_PAGE = { defaultLimit: 50, maxLimit: 200 };
/** How many deployments, subscriptions and contacts the detail view embeds (counts give the totals). */
const DETAIL_ITEMS = 200;
const tags = ['customers'];

export function customerRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const read = access(deps, { scope: 'customers:read' });
  const write = access(deps, { scope: 'customers:write' });

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/customers',
      tags,
      summary: 'List customers (filter by status)',
      middleware: [read] as const,
      request: { query: pageQuery(LIST_PAGE).extend(CustomerListQuery.shape) },
      responses: {
        200: ok(CustomerPage, 'a page of customers'),
        ...registryErrors({ ...AUTH_ERRORS, 422: 'unknown status' }),
      },
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { rows, total } = await listCustomers(deps.db, { status: q.status }, q);
      return c.json(page('items', rows, total, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/customers',
      tags,
      summary: 'Create a customer (status defaults to lead)',
      middleware: [write] as const,
      request: { body: jsonBody(CreateCustomerBody) },
      responses: {
        201: ok(Customer, 'the new customer'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, 409: 'customer_slug_taken' }),
      },
    }),
    async (c) => {
      const { slug, ...body } = c.req.valid('json');
      const fields: CustomerFields = {
        name: body.name,
        primary_email: body.primary_email ?? null,
        status: body.status ?? 'lead',
        notes: body.notes ?? null,
        pipeline_stage: body.pipeline_stage ?? null,
        next_action: body.next_action ?? null,
        next_action_date: body.next_action_date ?? null,
        source: body.source ?? null,
      };
      return c.json(await createCustomer(deps, slug, fields, 'api', actorOf(c)), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/customers/{slug}',
      tags,
      summary: 'One customer with its deployments, subscriptions, contacts and counts',
      middleware: [read] as const,
      request: { params: SlugParam },
      responses: {
        200: ok(CustomerDetail, 'the customer'),
        ...registryErrors({ ...AUTH_ERRORS, 404: 'customer_not_found' }),
      },
    }),
    async (c) => {
      const customer = await liveCustomer(deps, c.req.valid('param').slug);
      const first = { limit: DETAIL_ITEMS, offset: 0 };
      const [deployments, subscriptions, contacts, counts] = await Promise.all([
        listDeployments(deps.db, { customer_id: customer.id }, first),
        listSubscriptions(deps.db, { customer_id: customer.id }, first),
        contactsOf(deps.db, customer.id),
        countsOf(deps.db, customer.id),
      ]);
      return c.json(
        {
          ...customer,
          deployments: deployments.rows,
          subscriptions: subscriptions.rows,
          contacts: contacts.slice(0, DETAIL_ITEMS),
          counts,
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/api/v1/customers/{slug}',
      tags,
      summary: 'Update any field but the slug',
      middleware: [write] as const,
      request: { params: SlugParam, body: jsonBody(PatchCustomerBody) },
      responses: {
        200: ok(Customer, 'the customer as changed'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, 404: 'customer_not_found' }),
      },
    }),
    async (c) => {
      return c.json(await updateCustomer(deps, c.req.valid('param').slug, c.req.valid('json'), actorOf(c)), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/api/v1/customers/{slug}',
      tags,
      summary: 'Delete a customer (interactive admins only; the history stays)',
      middleware: [access(deps, 'admin')] as const,
      request: { params: SlugParam },
      responses: { 204: { description: 'deleted' }, ...registryErrors({ ...AUTH_ERRORS, 404: 'customer_not_found' }) },
    }),
    async (c) => {
      await deleteCustomer(deps, c.req.valid('param').slug, actorOf(c));
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/leads',
      tags: ['leads'],
      middleware: [write] as const,
      summary:
        'Capture a lead: slug derived from the name (or the e-mail) and de-duplicated; the same e-mail again answers the existing customer',
      description:
        "`name` is optional: without it the slug comes from the e-mail's local part (else `lead`) and the customer's name is the e-mail.",
      request: { body: jsonBody(LeadBody) },
      responses: {
        201: ok(Customer, 'a new customer with status lead'),
        200: ok(Customer, 'the existing customer with this e-mail'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS }),
      },
    }),
    async (c) => {
      const { customer, created } = await captureLead(deps, c.req.valid('json'), actorOf(c));
      return created ? c.json(customer, 201) : c.json(customer, 200);
    },
  );

  return app;
}
