// What is filed under a customer: contacts (POST, contacts:write), touchpoints (GET
// customers:read, POST contacts:write), agreements (GET customers:read, POST customers:write)
// and usage records (GET customers:read, POST subscriptions:write). Each addition is an event
// on the customer's stream.

import { createRoute } from '@hono/zod-openapi';
import { listAgreements, listTouchpoints, listUsage } from '../../../projections/registry/customers.ts';
import { jsonBody, ok } from '../../shared/openapi.ts';
import { page, pageQuery } from '../../shared/pagination.ts';
import { access } from '../auth/access.ts';
import { actorOf } from '../auth/principal.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, BODY_ERRORS, registryErrors, registryRouter } from '../router.ts';
import { LIST_PAGE } from './routes.ts';
import {
  Agreement,
  AgreementBody,
  AgreementPage,
  Contact,
  ContactBody,
  SlugParam,
  Touchpoint,
  TouchpointBody,
  TouchpointPage,
  TouchpointQuery,
  Usage,
  UsageBody,
  UsagePage,
  UsageQuery,
} from './schemas.ts';
import { addContact, liveCustomer, logTouchpoint, recordAgreement, recordUsage } from './commands.ts';

const NOT_FOUND = { 404: 'customer_not_found' };

export function customerRecordRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const read = access(deps, { scope: 'customers:read' });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/customers/{slug}/contacts',
      tags: ['contacts'],
      summary: 'Add a contact (role defaults to other)',
      middleware: [access(deps, { scope: 'contacts:write' })] as const,
      request: { params: SlugParam, body: jsonBody(ContactBody) },
      responses: {
        201: ok(Contact, 'the new contact'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, ...NOT_FOUND, 409: 'contact_exists (same e-mail)' }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const contact = {
        name: body.name,
        email: body.email,
        role: body.role ?? 'other',
        last_contacted_at: body.last_contacted_at ?? null,
      };
      return c.json(await addContact(deps, c.req.valid('param').slug, contact, actorOf(c)), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/customers/{slug}/touchpoints',
      tags: ['touchpoints'],
      summary: 'The interaction log, newest first',
      middleware: [read] as const,
      request: { params: SlugParam, query: pageQuery(LIST_PAGE).extend(TouchpointQuery.shape) },
      responses: {
        200: ok(TouchpointPage, 'a page of touchpoints'),
        ...registryErrors({ ...AUTH_ERRORS, ...NOT_FOUND, 422: 'unknown kind' }),
      },
    }),
    async (c) => {
      const customer = await liveCustomer(deps, c.req.valid('param').slug);
      const q = c.req.valid('query');
      const { rows, total } = await listTouchpoints(deps.db, customer.id, { kind: q.kind }, q);
      return c.json(page('items', rows, total, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/customers/{slug}/touchpoints',
      tags: ['touchpoints'],
      summary: 'Log an interaction',
      middleware: [access(deps, { scope: 'contacts:write' })] as const,
      request: { params: SlugParam, body: jsonBody(TouchpointBody) },
      responses: {
        201: ok(Touchpoint, 'the touchpoint'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, ...NOT_FOUND }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const touchpoint = {
        kind: body.kind,
        summary: body.summary,
        occurred_at: new Date(body.occurred_at).toISOString(),
        contact_email: body.contact_email ?? null,
      };
      return c.json(await logTouchpoint(deps, c.req.valid('param').slug, touchpoint, actorOf(c)), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/customers/{slug}/agreements',
      tags: ['agreements'],
      summary: 'Agreements on file',
      middleware: [read] as const,
      request: { params: SlugParam, query: pageQuery(LIST_PAGE) },
      responses: {
        200: ok(AgreementPage, 'a page of agreements'),
        ...registryErrors({ ...AUTH_ERRORS, ...NOT_FOUND }),
      },
    }),
    async (c) => {
      const customer = await liveCustomer(deps, c.req.valid('param').slug);
      const q = c.req.valid('query');
      const { rows, total } = await listAgreements(deps.db, customer.id, q);
      return c.json(page('items', rows, total, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/customers/{slug}/agreements',
      tags: ['agreements'],
      summary: 'File an agreement',
      middleware: [access(deps, { scope: 'customers:write' })] as const,
      request: { params: SlugParam, body: jsonBody(AgreementBody) },
      responses: {
        201: ok(Agreement, 'the agreement'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, ...NOT_FOUND }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const agreement = {
        kind: body.kind,
        title: body.title,
        signed_at: body.signed_at,
        expires_at: body.expires_at ?? null,
        document_url: body.document_url ?? null,
      };
      return c.json(await recordAgreement(deps, c.req.valid('param').slug, agreement, actorOf(c)), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/customers/{slug}/usage',
      tags: ['usage'],
      summary: 'Usage records, newest period first (filter by product, metric)',
      middleware: [read] as const,
      request: { params: SlugParam, query: pageQuery(LIST_PAGE).extend(UsageQuery.shape) },
      responses: {
        200: ok(UsagePage, 'a page of usage records'),
        ...registryErrors({ ...AUTH_ERRORS, ...NOT_FOUND, 422: 'unknown product' }),
      },
    }),
    async (c) => {
      const customer = await liveCustomer(deps, c.req.valid('param').slug);
      const q = c.req.valid('query');
      const { rows, total } = await listUsage(deps.db, customer.id, { product: q.product, metric: q.metric }, q);
      return c.json(page('items', rows, total, q), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/customers/{slug}/usage',
      tags: ['usage'],
      summary: 'Record usage',
      middleware: [access(deps, { scope: 'subscriptions:write' })] as const,
      request: { params: SlugParam, body: jsonBody(UsageBody) },
      responses: {
        201: ok(Usage, 'the usage record'),
        ...registryErrors({ ...AUTH_ERRORS, ...BODY_ERRORS, ...NOT_FOUND }),
      },
    }),
    async (c) => {
      const body = c.req.valid('json');
      const usage = {
        product: body.product,
        metric: body.metric,
        quantity: body.quantity,
        period_start: new Date(body.period_start).toISOString(),
        period_end: new Date(body.period_end).toISOString(),
      };
      return c.json(await recordUsage(deps, c.req.valid('param').slug, usage, actorOf(c)), 201);
    },
  );

  return app;
}
