// The deployments read model (`registry_deployments`): who runs which product at which version.
// Deployments of a deleted customer stay in the table and are hidden by every query.

import type { Channel, Product } from '../../domain/registry/catalog.ts';
import type { DeploymentEvent, DeploymentFields } from '../../domain/registry/deployments/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import { paged, ts, where, type Rows } from './columns.ts';

const PATCHABLE = new Set(['version', 'last_seen_at', 'endpoint_url', 'channel']);

export const deploymentsProjection = defineProjection<DeploymentEvent>({
  name: 'registry_deployments',
  handles: ['DeploymentRegistered', 'DeploymentUpdated'],
  tables: ['registry_deployments'],
  async apply(event, tx) {
    const d = event.data;
    if (event.type === 'DeploymentRegistered') {
      const r = event.data;
      await tx.query(
        `INSERT INTO registry_deployments (id, customer_id, customer_slug, product, version, channel, endpoint_url, instance_id, first_deployed_at, last_seen_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
        [
          r.deployment_id,
          r.customer_id,
          r.customer_slug,
          r.product,
          r.version,
          r.channel,
          r.endpoint_url,
          r.instance_id,
          r.first_deployed_at,
          r.last_seen_at,
          r.at,
        ],
      );
      return;
    }
    const changes = event.data.changes;
    const fields = Object.keys(changes).filter((f) => PATCHABLE.has(f));
    const sets = fields.map((f, i) => `${f} = $${i + 3}`);
    await tx.query(`UPDATE registry_deployments SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, [
      d.deployment_id,
      d.at,
      ...fields.map((f) => changes[f]!.after),
    ]);
  },
});

/** A deployment as the API shows it: the decider's fields with its ids, product and times. */
export type DeploymentRow = {
  id: string;
  customer_id: string;
  customer_slug: string;
  product: Product;
} & DeploymentFields & { created_at: string; updated_at: string };

const DEPLOYMENT = `d.id, d.customer_id, d.customer_slug, d.product, d.version, d.channel, d.endpoint_url, d.instance_id,
  ${ts('d.first_deployed_at')}, ${ts('d.last_seen_at')}, ${ts('d.created_at')}, ${ts('d.updated_at')}`;
const LIVE = 'FROM registry_deployments d JOIN registry_customers c ON c.id = d.customer_id AND c.deleted_at IS NULL';

export async function deploymentById(pool: Pool, id: string): Promise<DeploymentRow | null> {
  const { rows } = await pool.query<DeploymentRow>(`SELECT ${DEPLOYMENT} ${LIVE} WHERE d.id = $1`, [id]);
  return rows[0] ?? null;
}

export interface DeploymentFilter {
  product?: Product;
  channel?: Channel;
  customer_id?: string;
}

export async function listDeployments(
  pool: Pool,
  filter: DeploymentFilter,
  page: { limit: number; offset: number },
): Promise<Rows<DeploymentRow>> {
  const w = where([
    filter.product && ['d.product = ?', filter.product],
    filter.channel && ['d.channel = ?', filter.channel],
    filter.customer_id && ['d.customer_id = ?', filter.customer_id],
  ]);
  return paged<DeploymentRow>(pool, DEPLOYMENT, LIVE, w, 'd.created_at, d.id', page);
}
