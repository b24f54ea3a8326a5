// The subscription aggregate (`registry.subscription-<uuid>`): recurring revenue of one customer for one
// product. Status and `mrr_cents` change over time; each change is an event with the values
// before and after, which the trend read model folds into month-end figures.

import { DomainError, type Decider } from '../../shared/decider.ts';
import { applyChanges, diff } from '../catalog.ts';
import type { SubscriptionFields, Ref, SubscriptionEvent } from './events.ts';

export type SubscriptionPatch = Partial<Pick<SubscriptionFields, 'status' | 'mrr_cents' | 'renewal_date'>>;

export type SubscriptionCommand =
  | { type: 'CreateSubscription'; ref: Ref; fields: SubscriptionFields; at: string }
  | { type: 'UpdateSubscription'; patch: SubscriptionPatch; at: string };

export interface SubscriptionState {
  ref: Ref | null;
  fields: SubscriptionFields | null;
}

function decide(command: SubscriptionCommand, state: SubscriptionState): SubscriptionEvent[] {
  switch (command.type) {
    case 'CreateSubscription':
      if (state.ref) throw new DomainError('conflict', 'subscription_exists', 'subscription already exists');
      if (!Number.isSafeInteger(command.fields.mrr_cents) || command.fields.mrr_cents < 0) {
        throw new DomainError('invalid', 'validation_failed', 'mrr_cents must be a non-negative integer');
      }
      return [{ type: 'SubscriptionCreated', data: { ...command.ref, ...command.fields, at: command.at } }];
    case 'UpdateSubscription': {
      if (!state.ref || !state.fields)
        throw new DomainError('not_found', 'subscription_not_found', 'no such subscription');
      const mrr = command.patch.mrr_cents;
      if (mrr !== undefined && (!Number.isSafeInteger(mrr) || mrr < 0)) {
        throw new DomainError('invalid', 'validation_failed', 'mrr_cents must be a non-negative integer');
      }
      const changes = diff(
        state.fields as unknown as Record<string, unknown>,
        command.patch as Record<string, unknown>,
      );
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'SubscriptionUpdated', data: { ...state.ref, changes, at: command.at } }];
    }
  }
}

function evolve(state: SubscriptionState, event: SubscriptionEvent): SubscriptionState {
  switch (event.type) {
    case 'SubscriptionCreated': {
      const { subscription_id, customer_id, customer_slug, product, at: _at, ...fields } = event.data;
      return { ref: { subscription_id, customer_id, customer_slug, product }, fields };
    }
    case 'SubscriptionUpdated':
      return { ...state, fields: state.fields && applyChanges(state.fields, event.data.changes) };
  }
}

export const subscriptionDecider: Decider<SubscriptionState, SubscriptionCommand, SubscriptionEvent> = {
  initialState: () => ({ ref: null, fields: null }),
  evolve,
  decide,
};
