// The registry's deciders, given/when/then: customers (updates carry only what changed, nothing
// after deletion, one contact per e-mail), subscriptions (revenue validated), tokens (expiry
// bounds, revocation once).

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { customerDecider } from '../../domain/registry/customers/decider.ts';
import type { CustomerEvent } from '../../domain/registry/customers/events.ts';
import { subscriptionDecider } from '../../domain/registry/subscriptions/decider.ts';
import type { SubscriptionEvent } from '../../domain/registry/subscriptions/events.ts';
import { tokenDecider } from '../../domain/registry/tokens/decider.ts';
import type { TokenEvent } from '../../domain/registry/tokens/events.ts';
import { spec } from '../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const fields = {
  name: 'Acme',
  primary_email: null,
  status: 'lead' as const,
  notes: null,
  pipeline_stage: null,
  next_action: null,
  next_action_date: null,
  source: null,
};
const created: CustomerEvent = {
  type: 'CustomerCreated',
  data: { customer_id: 'c1', slug: 'acme', ...fields, via: 'api', at },
};
const customer = spec(customerDecider);
const test = suite('registry deciders');

test('customer: an update carries only the changed fields, before and after; the same values change nothing', () => {
  customer([created])
    .when({ type: 'UpdateCustomer', patch: { status: 'paying', name: 'Acme' }, at })
    .then([
      {
        type: 'CustomerUpdated',
        data: { customer_id: 'c1', slug: 'acme', changes: { status: { before: 'lead', after: 'paying' } }, at },
      },
    ]);
  customer([created])
    .when({ type: 'UpdateCustomer', patch: { status: 'lead', notes: null }, at })
    .then([]);
});

test('customer: created once; nothing happens to it after deletion', () => {
  customer([created])
    .when({ type: 'CreateCustomer', customer_id: 'c1', slug: 'acme', fields, via: 'api', at })
    .thenError('customer_exists');
  const deleted: CustomerEvent = { type: 'CustomerDeleted', data: { customer_id: 'c1', slug: 'acme', at } };
  customer([created, deleted]).when({ type: 'DeleteCustomer', at }).thenError('customer_not_found');
  customer([created, deleted])
    .when({ type: 'UpdateCustomer', patch: { notes: 'x' }, at })
    .thenError('customer_not_found');
  customer([])
    .when({
      type: 'LogTouchpoint',
      touchpoint_id: 't',
      touchpoint: { kind: 'call', summary: 's', occurred_at: at, contact_email: null },
      at,
    })
    .thenError('customer_not_found');
});

test('customer: one contact per e-mail, compared case-insensitively', () => {
  const contact = { name: 'Cy', email: 'cy@acme.test', role: 'other' as const, last_contacted_at: null };
  const added: CustomerEvent = {
    type: 'ContactAdded',
    data: { customer_id: 'c1', slug: 'acme', contact_id: 'k1', ...contact, at },
  };
  customer([created, added])
    .when({ type: 'AddContact', contact_id: 'k2', contact: { ...contact, email: 'CY@acme.test' }, at })
    .thenError('contact_exists');
});

test('customer: agreements and usage are recorded on a live customer, with its reference', () => {
  const agreement = { kind: 'msa', title: 'MSA', signed_at: at, expires_at: null, document_url: null };
  customer([created])
    .when({ type: 'RecordAgreement', agreement_id: 'g1', agreement, at })
    .then([
      { type: 'AgreementRecorded', data: { customer_id: 'c1', slug: 'acme', agreement_id: 'g1', ...agreement, at } },
    ]);
  const usage = { product: 'chat' as const, metric: 'seats', quantity: 12, period_start: at, period_end: at };
  customer([created])
    .when({ type: 'RecordUsage', usage_id: 'u1', usage, at })
    .then([{ type: 'UsageRecorded', data: { customer_id: 'c1', slug: 'acme', usage_id: 'u1', ...usage, at } }]);
  const deleted: CustomerEvent = { type: 'CustomerDeleted', data: { customer_id: 'c1', slug: 'acme', at } };
  customer([created, deleted])
    .when({ type: 'RecordAgreement', agreement_id: 'g1', agreement, at })
    .thenError('customer_not_found');
  customer([]).when({ type: 'RecordUsage', usage_id: 'u1', usage, at }).thenError('customer_not_found');
});

test('subscription: mrr_cents must be a non-negative integer', () => {
  const ref = { subscription_id: 's1', customer_id: 'c1', customer_slug: 'acme', product: 'chat' as const };
  const base = {
    status: 'active' as const,
    mrr_cents: 100,
    renewal_date: null,
    stripe_customer_id: null,
    stripe_subscription_id: null,
  };
  spec(subscriptionDecider)([])
    .when({ type: 'CreateSubscription', ref, fields: { ...base, mrr_cents: -1 }, at })
    .thenError('validation_failed');
  const made: SubscriptionEvent = { type: 'SubscriptionCreated', data: { ...ref, ...base, at } };
  spec(subscriptionDecider)([made])
    .when({ type: 'UpdateSubscription', patch: { mrr_cents: 1.5 }, at })
    .thenError('validation_failed');
  spec(subscriptionDecider)([])
    .when({ type: 'UpdateSubscription', patch: { mrr_cents: 1 }, at })
    .thenError('subscription_not_found');
});

test('token: expiry within 1-365 days computed from the creation time; revoked once', () => {
  const create = {
    type: 'CreateToken' as const,
    token_id: 't1',
    name: 'ci',
    token_hash: 'h',
    token_prefix: 'registry_sk_abcdef',
    scopes: ['customers:read' as const],
    by: 'ada',
    at,
  };
  spec(tokenDecider)([])
    .when({ ...create, days: 0 })
    .thenError('validation_failed');
  spec(tokenDecider)([])
    .when({ ...create, days: 366 })
    .thenError('validation_failed');
  spec(tokenDecider)([])
    .when({ ...create, scopes: [], days: 5 })
    .thenError('validation_failed');
  spec(tokenDecider)([])
    .when({ ...create, days: 30 })
    .then((events) => {
      assert.is(events[0]!.type, 'RegistryTokenCreated');
      assert.is(
        (events[0] as Extract<TokenEvent, { type: 'RegistryTokenCreated' }>).data.expires_at,
        '2026-01-31T00:00:00.000Z',
      );
    });
  const revoked: TokenEvent = { type: 'RegistryTokenRevoked', data: { token_id: 't1', revoked_by: 'ada', at } };
  const madeToken: TokenEvent = {
    type: 'RegistryTokenCreated',
    data: {
      token_id: 't1',
      name: 'ci',
      token_hash: 'h',
      token_prefix: 'p',
      scopes: ['customers:read'],
      expires_at: at,
      created_by: null,
      at,
    },
  };
  spec(tokenDecider)([madeToken, revoked]).when({ type: 'RevokeToken', by: 'ada', at }).then([]);
  spec(tokenDecider)([]).when({ type: 'RevokeToken', by: 'ada', at }).thenError('token_not_found');
});

test.run();
