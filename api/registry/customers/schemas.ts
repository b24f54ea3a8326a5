// Request and response schemas of the customers slice: customers, leads, and the records filed
// under a customer (contacts, touchpoints, agreements, usage).

import { z } from '@hono/zod-openapi';
import { CONTACT_ROLES, CUSTOMER_STATUSES, PRODUCTS, TOUCHPOINT_KINDS } from '../../../domain/registry/catalog.ts';
import { pageFields } from '../../shared/pagination.ts';
import { Deployment } from '../deployments/schemas.ts';
import { Subscription } from '../subscriptions/schemas.ts';

export const SLUG_PATTERN = /^[a-z0-9][a-z0-9-]*$/;
export const slug = z
  .string()
  .min(1)
  .max(63)
  .regex(SLUG_PATTERN, 'lowercase letters, digits and dashes, starting with a letter or digit');
const text = (max: number) => z.string().trim().min(1).max(max);
const optional = (max: number) => z.string().max(max).nullable().optional();
export const isoDate = z.iso.date();
export const isoTime = z.iso.datetime({ offset: true });

export const SlugParam = z.object({
  slug: z.string().openapi({ param: { name: 'slug', in: 'path' }, example: 'acme' }),
});

const customerFields = {
  name: text(200),
  primary_email: z.email().max(320).nullable().optional(),
  status: z.enum(CUSTOMER_STATUSES).optional(),
  notes: optional(20_000),
  pipeline_stage: optional(100),
  next_action: optional(500),
  next_action_date: isoDate.nullable().optional(),
  source: optional(200),
};

export const CreateCustomerBody = z.strictObject({ slug, ...customerFields }).openapi('CreateCustomerRequest');

export const PatchCustomerBody = z
  .strictObject({ ...customerFields, name: customerFields.name.optional(), status: customerFields.status })
  .refine(
    (b) => Object.values(b).some((v) => v !== undefined),
    'send at least one field to change (any field but slug)',
  )
  .openapi('PatchCustomerRequest');

export const Customer = z
  .object({
    id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    primary_email: z.string().nullable(),
    status: z.enum(CUSTOMER_STATUSES),
    notes: z.string().nullable(),
    pipeline_stage: z.string().nullable(),
    next_action: z.string().nullable(),
    next_action_date: z.string().nullable(),
    source: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Customer');

export const Contact = z
  .object({
    id: z.uuid(),
    name: z.string(),
    email: z.string(),
    role: z.enum(CONTACT_ROLES),
    last_contacted_at: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('Contact');

export const CustomerDetail = Customer.extend({
  deployments: z.array(Deployment),
  subscriptions: z.array(Subscription),
  contacts: z.array(Contact),
  counts: z.object({
    deployments: z.number().int(),
    subscriptions: z.number().int(),
    contacts: z.number().int(),
    touchpoints: z.number().int(),
    agreements: z.number().int(),
    usage_records: z.number().int(),
  }),
}).openapi('CustomerDetail');

export const CustomerPage = z.object({ items: z.array(Customer), ...pageFields }).openapi('CustomerPage');
export const CustomerListQuery = z.object({ status: z.enum(CUSTOMER_STATUSES).optional() });

export const LeadBody = z
  .strictObject({
    // Lead forms often ask only for an e-mail: no name (or a blank one) is allowed.
    name: z.string().trim().max(200).nullable().optional().openapi({
      description:
        "optional; without it (null or blank too) the slug comes from the e-mail's local part and the customer's name is the e-mail",
    }),
    email: z.email().max(320),
    source: optional(200),
  })
  .openapi('LeadRequest');

export const ContactBody = z
  .strictObject({
    name: text(200),
    email: z.email().max(320),
    role: z.enum(CONTACT_ROLES).optional(),
    last_contacted_at: isoTime.nullable().optional(),
  })
  .openapi('ContactRequest');

export const TouchpointBody = z
  .strictObject({
    kind: z.enum(TOUCHPOINT_KINDS),
    summary: text(10_000),
    occurred_at: isoTime,
    contact_email: z.email().max(320).nullable().optional(),
  })
  .openapi('TouchpointRequest');

export const Touchpoint = z
  .object({
    id: z.uuid(),
    kind: z.enum(TOUCHPOINT_KINDS),
    summary: z.string(),
    occurred_at: z.string(),
    contact_email: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('Touchpoint');
export const TouchpointPage = z.object({ items: z.array(Touchpoint), ...pageFields }).openapi('TouchpointPage');
export const TouchpointQuery = z.object({ kind: z.enum(TOUCHPOINT_KINDS).optional() });

export const AgreementBody = z
  .strictObject({
    kind: text(100),
    title: text(300),
    signed_at: isoDate,
    expires_at: isoDate.nullable().optional(),
    document_url: z.url().max(2000).nullable().optional(),
  })
  .refine((b) => !b.expires_at || b.expires_at >= b.signed_at, {
    message: 'expires_at must not be before signed_at',
    path: ['expires_at'],
  })
  .openapi('AgreementRequest');

export const Agreement = z
  .object({
    id: z.uuid(),
    kind: z.string(),
    title: z.string(),
    signed_at: z.string(),
    expires_at: z.string().nullable(),
    document_url: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi('Agreement');
export const AgreementPage = z.object({ items: z.array(Agreement), ...pageFields }).openapi('AgreementPage');

export const UsageBody = z
  .strictObject({
    product: z.enum(PRODUCTS),
    metric: text(100),
    quantity: z.number().nonnegative().max(1e15),
    period_start: isoTime,
    period_end: isoTime,
  })
  .refine((b) => Date.parse(b.period_end) >= Date.parse(b.period_start), {
    message: 'period_end must not be before period_start',
    path: ['period_end'],
  })
  .openapi('UsageRequest');

export const Usage = z
  .object({
    id: z.uuid(),
    product: z.enum(PRODUCTS),
    metric: z.string(),
    quantity: z.number(),
    period_start: z.string(),
    period_end: z.string(),
    created_at: z.string(),
  })
  .openapi('UsageRecord');
export const UsagePage = z.object({ items: z.array(Usage), ...pageFields }).openapi('UsagePage');
export const UsageQuery = z.object({ product: z.enum(PRODUCTS).optional(), metric: z.string().max(100).optional() });
