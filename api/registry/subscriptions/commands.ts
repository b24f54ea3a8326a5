// Subscription commands (the slice's application layer, the only caller of the command runner
// for subscriptions): create one under an existing customer, update one; and the lookup they need.

import { randomUUID } from 'node:crypto';
import {
  subscriptionDecider,
  type SubscriptionCommand,
  type SubscriptionPatch,
} from '../../../domain/registry/subscriptions/decider.ts';
import { subscriptionStream } from '../../../domain/registry/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { subscriptionById, type SubscriptionRow } from '../../../projections/registry/subscriptions.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { isUuid } from '../../shared/params.ts';
import { referencedCustomer } from '../deployments/commands.ts';
import type { RegistryDeps } from '../deps.ts';

type Deps = Pick<RegistryDeps, 'commands' | 'db' | 'clock'>;
type Create = Extract<SubscriptionCommand, { type: 'CreateSubscription' }>;

/** A subscription by id, or 404 `subscription_not_found` (an id that is no UUID names none). */
export async function existingSubscription(deps: Pick<RegistryDeps, 'db'>, id: string): Promise<SubscriptionRow> {
  const subscription = isUuid(id) ? await subscriptionById(deps.db, id) : null;
  if (!subscription) throw new ApiError(404, 'subscription_not_found', 'no such subscription');
  return subscription;
}

/** Create a subscription to `product` for the customer `customer_slug` (422 when there is none). */
export async function createSubscription(
  deps: Deps,
  input: { customer_slug: string; product: Create['ref']['product'] } & Create['fields'],
  context: CommandContext,
): Promise<SubscriptionRow> {
  const customer = await referencedCustomer(deps, input.customer_slug);
  const id = randomUUID();
  const { customer_slug: _slug, product, ...fields } = input;
  await deps.commands.run(
    subscriptionStream(id),
    subscriptionDecider,
    {
      type: 'CreateSubscription',
      at: deps.clock.now().toISOString(),
      ref: { subscription_id: id, customer_id: customer.id, customer_slug: customer.slug, product },
      fields,
    },
    context,
  );
  return (await subscriptionById(deps.db, id))!;
}

/** Update status, mrr_cents or renewal_date; the subscription as changed. */
export async function updateSubscription(
  deps: Deps,
  id: string,
  patch: SubscriptionPatch,
  context: CommandContext,
): Promise<SubscriptionRow> {
  const subscription = await existingSubscription(deps, id);
  await deps.commands.run(
    subscriptionStream(subscription.id),
    subscriptionDecider,
    {
      type: 'UpdateSubscription',
      patch,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return (await subscriptionById(deps.db, subscription.id))!;
}
