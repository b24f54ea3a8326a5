// Request and response schemas of the deployments slice.

import { z } from '@hono/zod-openapi';
import { CHANNELS, PRODUCTS } from '../../../domain/registry/catalog.ts';
import { pageFields } from '../../shared/pagination.ts';
import { uuidParams } from '../../shared/params.ts';

const isoTime = z.iso.datetime({ offset: true });

export const CreateDeploymentBody = z
  .strictObject({
    customer_slug: z.string().min(1).max(63),
    product: z.enum(PRODUCTS),
    version: z.string().trim().min(1).max(100),
    channel: z.enum(CHANNELS).optional(),
    endpoint_url: z.url().max(2000).nullable().optional(),
    instance_id: z.string().max(200).nullable().optional(),
    first_deployed_at: isoTime.optional(),
    last_seen_at: isoTime.nullable().optional(),
  })
  .openapi('CreateDeploymentRequest');

export const PatchDeploymentBody = z
  .strictObject({
    version: z.string().trim().min(1).max(100).optional(),
    last_seen_at: isoTime.nullable().optional(),
    endpoint_url: z.url().max(2000).nullable().optional(),
    channel: z.enum(CHANNELS).optional(),
  })
  .refine(
    (b) => Object.values(b).some((v) => v !== undefined),
    'send at least one of version, last_seen_at, endpoint_url, channel',
  )
  .openapi('PatchDeploymentRequest');

export const Deployment = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    customer_slug: z.string(),
    product: z.enum(PRODUCTS),
    version: z.string(),
    channel: z.enum(CHANNELS),
    endpoint_url: z.string().nullable(),
    instance_id: z.string().nullable(),
    first_deployed_at: z.string(),
    last_seen_at: z.string().nullable(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .openapi('Deployment');

export const DeploymentPage = z.object({ items: z.array(Deployment), ...pageFields }).openapi('DeploymentPage');
export const DeploymentQuery = z.object({ product: z.enum(PRODUCTS).optional(), channel: z.enum(CHANNELS).optional() });
export const IdParam = uuidParams('id');
