// Seeding the registry for its bench: 10,000 customers and 50,000 subscription changes (10,000
// creations and 40,000 updates of status or revenue), plus 5,000 deployments and 1,000 customer
// status changes, spread over the last 13 months so the trend has a year of closed months.
// The events are the domain's own (same shapes the deciders produce) appended straight to the
// log in time order, month by month, with several writers inside a month, each owning a share
// of the customers so that every customer's own events keep their order. The projections then
// build the read models from the log as they would in production.

import { randomUUID } from 'node:crypto';
import { CHANNELS, PRODUCTS, SUBSCRIPTION_STATUSES } from '../domain/registry/catalog.ts';
import type { CustomerEvent } from '../domain/registry/customers/events.ts';
import { customerStream, deploymentStream, subscriptionStream } from '../domain/registry/streams.ts';
import type { DeploymentEvent } from '../domain/registry/deployments/events.ts';
import type { SubscriptionEvent } from '../domain/registry/subscriptions/events.ts';
import { toAppend } from '../infra/commands.ts';
import type { EventStore } from '../infra/eventstore/port.ts';
import { comparePositions, type Position } from '../infra/eventstore/position.ts';

/** BENCH_REGISTRY_SCALE (default 1) scales every count, for a quick trial run. */
const SCALE = Number(process.env.BENCH_REGISTRY_SCALE ?? 1);
export const SEED = {
  customers: Math.round(10_000 * SCALE),
  subscriptionChanges: Math.round(50_000 * SCALE),
  deployments: Math.round(5_000 * SCALE),
  churns: Math.round(1_000 * SCALE),
};

type Seeded = {
  customer: number;
  stream: string;
  at: number;
  event: CustomerEvent | SubscriptionEvent | DeploymentEvent;
};

/** A small deterministic generator, so every run seeds the same history. */
function random(seed: number) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

export function history(now: number): Seeded[] {
  const rnd = random(42);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const start = now - 395 * 86_400_000;
  const span = now - start - 86_400_000;
  const out: Seeded[] = [];
  const subs: {
    id: string;
    customer: number;
    slug: string;
    customerId: string;
    product: (typeof PRODUCTS)[number];
    status: string;
    mrr: number;
    created: number;
  }[] = [];
  const customers: { id: string; slug: string; status: string; created: number }[] = [];
  for (let i = 0; i < SEED.customers; i++) {
    const id = randomUUID();
    const slug = `customer-${i}`;
    const created = start + Math.floor((i / SEED.customers) * span * 0.8);
    const status = pick(['lead', 'trial', 'paying', 'paying', 'internal'] as const);
    customers.push({ id, slug, status, created });
    out.push({
      customer: i,
      stream: customerStream(id),
      at: created,
      event: {
        type: 'CustomerCreated',
        data: {
          customer_id: id,
          slug,
          name: `Customer ${i}`,
          primary_email: `c${i}@example.test`,
          status,
          notes: null,
          pipeline_stage: null,
          next_action: null,
          next_action_date: null,
          source: 'bench',
          via: 'api',
          at: new Date(created).toISOString(),
        },
      },
    });
    const subId = randomUUID();
    const product = pick(PRODUCTS);
    const subStatus = pick(['trialing', 'active', 'active'] as const);
    const mrr = Math.floor(rnd() * 50_000);
    subs.push({
      id: subId,
      customer: i,
      slug,
      customerId: id,
      product,
      status: subStatus,
      mrr,
      created: created + 3_600_000,
    });
    out.push({
      customer: i,
      stream: subscriptionStream(subId),
      at: created + 3_600_000,
      event: {
        type: 'SubscriptionCreated',
        data: {
          subscription_id: subId,
          customer_id: id,
          customer_slug: slug,
          product,
          status: subStatus,
          mrr_cents: mrr,
          renewal_date: null,
          stripe_customer_id: null,
          stripe_subscription_id: null,
          at: new Date(created + 3_600_000).toISOString(),
        },
      },
    });
  }
  // Updates: each at a time after its subscription's creation; the state is simulated so every
  // `before` is what the aggregate held.
  const updates = SEED.subscriptionChanges - subs.length;
  const planned = Array.from({ length: updates }, () => {
    const sub = pick(subs);
    return { sub, at: sub.created + 60_000 + Math.floor(rnd() * (now - 60_000 - sub.created - 60_000)) };
  }).sort((a, b) => a.at - b.at);
  for (const { sub, at } of planned) {
    const changes: Record<string, { before: unknown; after: unknown }> = {};
    if (rnd() < 0.5) {
      const mrr = Math.floor(rnd() * 50_000);
      if (mrr !== sub.mrr) changes.mrr_cents = { before: sub.mrr, after: mrr };
      sub.mrr = mrr;
    } else {
      const status = pick(SUBSCRIPTION_STATUSES);
      if (status !== sub.status) changes.status = { before: sub.status, after: status };
      sub.status = status;
    }
    if (Object.keys(changes).length === 0) changes.mrr_cents = { before: sub.mrr, after: (sub.mrr += 1) };
    out.push({
      customer: sub.customer,
      stream: subscriptionStream(sub.id),
      at,
      event: {
        type: 'SubscriptionUpdated',
        data: {
          subscription_id: sub.id,
          customer_id: sub.customerId,
          customer_slug: sub.slug,
          product: sub.product,
          changes,
          at: new Date(at).toISOString(),
        },
      },
    });
  }
  for (let i = 0; i < SEED.churns; i++) {
    const c = customers[Math.floor(rnd() * customers.length)]!;
    if (c.status === 'churned') continue;
    const at = c.created + 86_400_000 * (1 + Math.floor(rnd() * 30));
    out.push({
      customer: customers.indexOf(c),
      stream: customerStream(c.id),
      at,
      event: {
        type: 'CustomerUpdated',
        data: {
          customer_id: c.id,
          slug: c.slug,
          changes: { status: { before: c.status, after: 'churned' } },
          at: new Date(at).toISOString(),
        },
      },
    });
    c.status = 'churned';
  }
  for (let i = 0; i < SEED.deployments; i++) {
    const n = Math.floor(rnd() * customers.length);
    const c = customers[n]!;
    const at = c.created + 7_200_000;
    const id = randomUUID();
    out.push({
      customer: n,
      stream: deploymentStream(id),
      at,
      event: {
        type: 'DeploymentRegistered',
        data: {
          deployment_id: id,
          customer_id: c.id,
          customer_slug: c.slug,
          product: pick(PRODUCTS),
          version: `1.${Math.floor(rnd() * 12)}.0`,
          channel: pick(CHANNELS),
          endpoint_url: null,
          instance_id: null,
          first_deployed_at: new Date(at).toISOString(),
          last_seen_at: new Date(now - Math.floor(rnd() * 30) * 86_400_000).toISOString(),
          at: new Date(at).toISOString(),
        },
      },
    });
  }
  // A customer's churn may be planned before a subscription change of its own: order by time,
  // keeping each customer's events in time order too.
  return out.sort((a, b) => a.at - b.at);
}

const monthKey = (at: number) => new Date(at).toISOString().slice(0, 7);

/** Append the history month by month; returns the greatest position written of each event type. */
export async function appendHistory(
  store: EventStore,
  events: Seeded[],
  writers = 8,
  progress: (m: string) => void = () => {},
): Promise<Map<string, Position>> {
  const context = { actor: { kind: 'system' as const, id: 'bench' }, correlationId: null };
  const last = new Map<string, Position>();
  const months = new Map<string, Seeded[]>();
  for (const e of events) {
    const key = monthKey(e.at);
    const list = months.get(key);
    if (list) list.push(e);
    else months.set(key, [e]);
  }
  for (const [month, list] of months) {
    const shares = Array.from({ length: writers }, (_, w) => list.filter((e) => e.customer % writers === w));
    await Promise.all(
      shares.map(async (share) => {
        for (const e of share) {
          const { position } = await store.append(e.stream, [toAppend(e.event, context)], { expected: 'any' });
          const seen = last.get(e.event.type);
          if (!seen || comparePositions(position, seen) > 0) last.set(e.event.type, position);
        }
      }),
    );
    progress(`${month}: ${list.length} events`);
  }
  return last;
}
