// The registry's audit stream (`registry_audit`): every change to customers, deployments,
// subscriptions and machine tokens, with its log position, stream, actor and time, and for
// updates the fields before and after. `GET /api/v1/events` reads it newest first. Token uses
// (coalesced bookkeeping) and sessions are not changes to the registry's data and stay out; a
// token's hash never enters this table.

import type { CustomerEvent } from '../../domain/registry/customers/events.ts';
import type { DeploymentEvent } from '../../domain/registry/deployments/events.ts';
import type { SubscriptionEvent } from '../../domain/registry/subscriptions/events.ts';
import type { TokenEvent } from '../../domain/registry/tokens/events.ts';
import type { Position } from '../../infra/eventstore/position.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import { ts, where } from './columns.ts';

type AuditedEvent =
  CustomerEvent | DeploymentEvent | SubscriptionEvent | Exclude<TokenEvent, { type: 'RegistryTokenUsed' }>;

export const AUDITED_TYPES = [
  'CustomerCreated',
  'CustomerUpdated',
  'CustomerDeleted',
  'ContactAdded',
  'TouchpointLogged',
  'AgreementRecorded',
  'UsageRecorded',
  'DeploymentRegistered',
  'DeploymentUpdated',
  'SubscriptionCreated',
  'SubscriptionUpdated',
  'RegistryTokenCreated',
  'RegistryTokenRevoked',
] as const satisfies readonly AuditedEvent['type'][];

export const auditProjection = defineProjection<AuditedEvent>({
  name: 'registry_audit',
  handles: AUDITED_TYPES,
  tables: ['registry_audit'],
  async apply(event, tx) {
    const data: Record<string, unknown> = { ...event.data };
    delete data.token_hash;
    const slug =
      'slug' in event.data ? event.data.slug : 'customer_slug' in event.data ? event.data.customer_slug : null;
    const changes = 'changes' in event.data ? event.data.changes : null;
    await tx.query(
      `INSERT INTO registry_audit (commit_pos, prepare_pos, event_id, type, stream, customer_slug, actor, at, changes, data)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
      [
        event.position.commit.toString(),
        event.position.prepare.toString(),
        event.id,
        event.type,
        event.stream,
        slug,
        JSON.stringify(event.metadata.actor),
        event.data.at,
        changes === null ? null : JSON.stringify(changes),
        JSON.stringify(data),
      ],
    );
  },
});

export interface AuditRow {
  /** `<commit>/<prepare>`: the event's log position (the next page's `before`). */
  position: string;
  type: string;
  stream: string;
  customer_slug: string | null;
  actor: { kind: string; id: string | null };
  at: string;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  data: Record<string, unknown>;
}

export interface AuditFilter {
  before?: Position;
  customer?: string;
  type?: string;
}

/** The newest `limit` audited events matching the filter (strictly before `before`). */
export async function auditEvents(pool: Pool, filter: AuditFilter, limit: number): Promise<AuditRow[]> {
  const w = where([
    filter.customer && ['customer_slug = ?', filter.customer],
    filter.type && ['type = ?', filter.type],
    filter.before && ['commit_pos <= ?::bigint', filter.before.commit.toString()],
  ]);
  const params = [...w.params];
  let sql = w.sql;
  if (filter.before) {
    // Row comparison (commit, prepare) < (c, p), with the first column alone narrowing the index scan.
    params.push(filter.before.commit.toString(), filter.before.prepare.toString());
    sql += ` AND (commit_pos, prepare_pos) < ($${params.length - 1}::bigint, $${params.length}::bigint)`;
  }
  // Ordered by the bigint columns, named with their table: an output column of the same name
  // (a ::text cast) would win over a bare name and sort '9' after '10'.
  const { rows } = await pool.query<AuditRow>(
    `SELECT commit_pos::text || '/' || prepare_pos::text AS position, type, stream, customer_slug, actor, ${ts('at')}, changes, data
     FROM registry_audit ${sql} ORDER BY registry_audit.commit_pos DESC, registry_audit.prepare_pos DESC LIMIT $${params.length + 1}`,
    [...params, limit],
  );
  return rows;
}

/** When the registry's data last changed (null before any change). */
export async function lastChangeAt(pool: Pool): Promise<string | null> {
  const { rows } = await pool.query<{ at: string | null }>(`SELECT ${ts('max(at)', 'at')} FROM registry_audit`);
  return rows[0]?.at ?? null;
}
