// The customers read model (`registry_customers`): one row per customer (deleted ones keep their
// row with `deleted_at`, hidden from every query), and the contacts, touchpoints, agreements and
// usage records filed under them. A touchpoint naming a contact's e-mail moves that contact's
// `last_contacted_at` forward.

import type { CustomerEvent, CustomerFields } from '../../domain/registry/customers/events.ts';
import type { ContactRole, CustomerStatus, Product, TouchpointKind } from '../../domain/registry/catalog.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';
import { day, paged, ts, where, type Rows } from './columns.ts';

const FIELD_COLUMNS = new Set([
  'name',
  'primary_email',
  'status',
  'notes',
  'pipeline_stage',
  'next_action',
  'next_action_date',
  'source',
]);

export const customersProjection = defineProjection<CustomerEvent>({
  name: 'registry_customers',
  handles: [
    'CustomerCreated',
    'CustomerUpdated',
    'CustomerDeleted',
    'ContactAdded',
    'TouchpointLogged',
    'AgreementRecorded',
    'UsageRecorded',
  ],
  tables: ['registry_customers', 'registry_contacts', 'registry_touchpoints', 'registry_agreements', 'registry_usage'],
  async apply(event, tx) {
    switch (event.type) {
      case 'CustomerCreated': {
        const d = event.data;
        await tx.query(
          `INSERT INTO registry_customers (id, slug, name, primary_email, status, notes, pipeline_stage, next_action, next_action_date, source, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`,
          [
            d.customer_id,
            d.slug,
            d.name,
            d.primary_email,
            d.status,
            d.notes,
            d.pipeline_stage,
            d.next_action,
            d.next_action_date,
            d.source,
            d.at,
          ],
        );
        return;
      }
      case 'CustomerUpdated': {
        const fields = Object.keys(event.data.changes).filter((f) => FIELD_COLUMNS.has(f));
        const values = fields.map((f) => event.data.changes[f]!.after);
        const sets = fields.map((f, i) => `${f} = $${i + 3}`);
        await tx.query(`UPDATE registry_customers SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, [
          event.data.customer_id,
          event.data.at,
          ...values,
        ]);
        return;
      }
      case 'CustomerDeleted':
        await tx.query('UPDATE registry_customers SET deleted_at = $2, updated_at = $2 WHERE id = $1', [
          event.data.customer_id,
          event.data.at,
        ]);
        return;
      case 'ContactAdded': {
        const d = event.data;
        await tx.query(
          'INSERT INTO registry_contacts (id, customer_id, name, email, role, last_contacted_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [d.contact_id, d.customer_id, d.name, d.email, d.role, d.last_contacted_at, d.at],
        );
        return;
      }
      case 'TouchpointLogged': {
        const d = event.data;
        await tx.query(
          'INSERT INTO registry_touchpoints (id, customer_id, kind, summary, occurred_at, contact_email, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [d.touchpoint_id, d.customer_id, d.kind, d.summary, d.occurred_at, d.contact_email, d.at],
        );
        if (d.contact_email) {
          await tx.query(
            `UPDATE registry_contacts SET last_contacted_at = greatest(coalesce(last_contacted_at, $3), $3)
             WHERE customer_id = $1 AND lower(email) = lower($2)`,
            [d.customer_id, d.contact_email, d.occurred_at],
          );
        }
        return;
      }
      case 'AgreementRecorded': {
        const d = event.data;
        await tx.query(
          'INSERT INTO registry_agreements (id, customer_id, kind, title, signed_at, expires_at, document_url, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
          [d.agreement_id, d.customer_id, d.kind, d.title, d.signed_at, d.expires_at, d.document_url, d.at],
        );
        return;
      }
      case 'UsageRecorded': {
        const d = event.data;
        await tx.query(
          'INSERT INTO registry_usage (id, customer_id, product, metric, quantity, period_start, period_end, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
          [d.usage_id, d.customer_id, d.product, d.metric, d.quantity, d.period_start, d.period_end, d.at],
        );
        return;
      }
    }
  },
});

// --- queries ---------------------------------------------------------------------------------

/** A customer as the API shows it: its fields (the decider's), with id, slug and times. */
export type CustomerRow = { id: string; slug: string } & CustomerFields & { created_at: string; updated_at: string };

const CUSTOMER = `id, slug, name, primary_email, status, notes, pipeline_stage, next_action, ${day('next_action_date')}, source, ${ts('created_at')}, ${ts('updated_at')}`;

export async function customerBySlug(pool: Pool, slug: string): Promise<CustomerRow | null> {
  const { rows } = await pool.query<CustomerRow>(
    `SELECT ${CUSTOMER} FROM registry_customers WHERE slug = $1 AND deleted_at IS NULL`,
    [slug],
  );
  return rows[0] ?? null;
}

export async function customerById(pool: Pool, id: string): Promise<CustomerRow | null> {
  const { rows } = await pool.query<CustomerRow>(
    `SELECT ${CUSTOMER} FROM registry_customers WHERE id = $1 AND deleted_at IS NULL`,
    [id],
  );
  return rows[0] ?? null;
}

/** The oldest live customer with this primary e-mail (compared case-insensitively). */
export async function customerByEmail(pool: Pool, email: string): Promise<CustomerRow | null> {
  const { rows } = await pool.query<CustomerRow>(
    `SELECT ${CUSTOMER} FROM registry_customers WHERE lower(primary_email) = lower($1) AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1`,
    [email],
  );
  return rows[0] ?? null;
}

export async function listCustomers(
  pool: Pool,
  filter: { status?: CustomerStatus },
  page: { limit: number; offset: number },
): Promise<Rows<CustomerRow>> {
  const w = where(['deleted_at IS NULL', filter.status && ['status = ?', filter.status]]);
  return paged<CustomerRow>(pool, CUSTOMER, 'FROM registry_customers', w, 'slug', page);
}

export interface ContactRow {
  id: string;
  name: string;
  email: string;
  role: ContactRole;
  last_contacted_at: string | null;
  created_at: string;
}

export async function contactsOf(pool: Pool, customerId: string): Promise<ContactRow[]> {
  const { rows } = await pool.query<ContactRow>(
    `SELECT id, name, email, role, ${ts('last_contacted_at')}, ${ts('created_at')} FROM registry_contacts WHERE customer_id = $1 ORDER BY created_at, id`,
    [customerId],
  );
  return rows;
}

export async function contactById(pool: Pool, id: string): Promise<ContactRow | null> {
  const { rows } = await pool.query<ContactRow>(
    `SELECT id, name, email, role, ${ts('last_contacted_at')}, ${ts('created_at')} FROM registry_contacts WHERE id = $1`,
    [id],
  );
  return rows[0] ?? null;
}

export interface CustomerCounts {
  deployments: number;
  subscriptions: number;
  contacts: number;
  touchpoints: number;
  agreements: number;
  usage_records: number;
}

export async function countsOf(pool: Pool, customerId: string): Promise<CustomerCounts> {
  const { rows } = await pool.query<CustomerCounts>(
    `SELECT (SELECT count(*)::int FROM registry_deployments WHERE customer_id = $1) AS deployments,
            (SELECT count(*)::int FROM registry_subscriptions WHERE customer_id = $1) AS subscriptions,
            (SELECT count(*)::int FROM registry_contacts WHERE customer_id = $1) AS contacts,
            (SELECT count(*)::int FROM registry_touchpoints WHERE customer_id = $1) AS touchpoints,
            (SELECT count(*)::int FROM registry_agreements WHERE customer_id = $1) AS agreements,
            (SELECT count(*)::int FROM registry_usage WHERE customer_id = $1) AS usage_records`,
    [customerId],
  );
  return rows[0]!;
}

export interface TouchpointRow {
  id: string;
  kind: TouchpointKind;
  summary: string;
  occurred_at: string;
  contact_email: string | null;
  created_at: string;
}

const TOUCHPOINT = `id, kind, summary, ${ts('occurred_at')}, contact_email, ${ts('created_at')}`;

export async function touchpointById(pool: Pool, id: string): Promise<TouchpointRow | null> {
  const { rows } = await pool.query<TouchpointRow>(`SELECT ${TOUCHPOINT} FROM registry_touchpoints WHERE id = $1`, [
    id,
  ]);
  return rows[0] ?? null;
}

export async function listTouchpoints(
  pool: Pool,
  customerId: string,
  filter: { kind?: string },
  page: { limit: number; offset: number },
): Promise<Rows<TouchpointRow>> {
  const w = where([['customer_id = ?', customerId], filter.kind && ['kind = ?', filter.kind]]);
  return paged<TouchpointRow>(pool, TOUCHPOINT, 'FROM registry_touchpoints', w, 'occurred_at DESC, id', page);
}

export interface AgreementRow {
  id: string;
  kind: string;
  title: string;
  signed_at: string;
  expires_at: string | null;
  document_url: string | null;
  created_at: string;
}

const AGREEMENT = `id, kind, title, ${day('signed_at')}, ${day('expires_at')}, document_url, ${ts('created_at')}`;

export async function agreementById(pool: Pool, id: string): Promise<AgreementRow | null> {
  const { rows } = await pool.query<AgreementRow>(`SELECT ${AGREEMENT} FROM registry_agreements WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function listAgreements(
  pool: Pool,
  customerId: string,
  page: { limit: number; offset: number },
): Promise<Rows<AgreementRow>> {
  return paged<AgreementRow>(
    pool,
    AGREEMENT,
    'FROM registry_agreements',
    where([['customer_id = ?', customerId]]),
    'signed_at DESC, id',
    page,
  );
}

export interface UsageRow {
  id: string;
  product: Product;
  metric: string;
  quantity: number;
  period_start: string;
  period_end: string;
  created_at: string;
}

const USAGE = `id, product, metric, quantity::float8 AS quantity, ${ts('period_start')}, ${ts('period_end')}, ${ts('created_at')}`;

export async function usageById(pool: Pool, id: string): Promise<UsageRow | null> {
  const { rows } = await pool.query<UsageRow>(`SELECT ${USAGE} FROM registry_usage WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function listUsage(
  pool: Pool,
  customerId: string,
  filter: { product?: string; metric?: string },
  page: { limit: number; offset: number },
): Promise<Rows<UsageRow>> {
  const w = where([
    ['customer_id = ?', customerId],
    filter.product && ['product = ?', filter.product],
    filter.metric && ['metric = ?', filter.metric],
  ]);
  return paged<UsageRow>(pool, USAGE, 'FROM registry_usage', w, 'period_start DESC, id', page);
}
