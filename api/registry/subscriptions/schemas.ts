// Request and response schemas of the subscriptions slice.

import { z } from '@hono/zod-openapi';
import { PRODUCTS, SUBSCRIPTION_STATUSES } from '../../../domain/registry/catalog.ts';
import { pageFields } from '../../shared/pagination.ts';

const mrr = z
  .number()
  .int('mrr_cents must be a non-negative integer')
  .nonnegative('mrr_cents must be a non-negative integer')
  .max(Number.MAX_SAFE_INTEGER);

export const CreateSubscriptionBody = z
  .strictObject({
    customer_slug: z.string().min(1).max(63),
    product: z.enum(PRODUCTS),
    status: z.enum(SUBSCRIPTION_STATUSES).optional(),
    mrr_cents: mrr.optional().openapi({ description: 'non-negative integer; 0 means complimentary (default 0)' }),
    renewal_date: z.iso.date().nullable().optional(),
    stripe_customer_id: z.string().max(200).nullable().optional(),
    stripe_subscription_id: z.string().max(200).nullable().optional(),
  })
  .openapi('CreateSubscriptionRequest');

export const PatchSubscriptionBody = z
  .strictObject({
    status: z.enum(SUBSCRIPTION_STATUSES).optional(),
    mrr_cents: mrr.optional(),
    renewal_date: z.iso.date().nullable().optional(),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), 'send at least one of status, mrr_cents, renewal_date')
  .openapi('PatchSubscriptionRequest');

export const Subscription = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    customer_slug: z.string(),
    product: z.enum(PRODUCTS),
    status: z.enum(SUBSCRIPTION_STATUSES),
    mrr_cents: z.number().int(),
    renewal_date: z.string().nullable(),
    stripe_customer_id: z.string().nullable(),
    stripe_subscription_id: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Subscription');

export const SubscriptionPage = z.object({ items: z.array(Subscription), ...pageFields }).openapi('SubscriptionPage');
export const SubscriptionQuery = z.object({
  status: z.enum(SUBSCRIPTION_STATUSES).optional(),
  product: z.enum(PRODUCTS).optional(),
});
