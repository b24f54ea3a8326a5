// The customer registry's fixed vocabularies (spec 3): statuses, the built-in product catalog,
// deployment channels, contact roles, touchpoint kinds and machine-token scopes. Every value
// outside these lists is refused with 422 at the API.

export const CUSTOMER_STATUSES = ['lead', 'trial', 'paying', 'churned', 'internal'] as const;
export type CustomerStatus = (typeof CUSTOMER_STATUSES)[number];

export const SUBSCRIPTION_STATUSES = ['trialing', 'active', 'past_due', 'cancelled'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** The built-in product identifiers of this release: the platform's own three services. */
export const PRODUCTS = ['orchestration', 'chat', 'registry'] as const;
export type Product = (typeof PRODUCTS)[number];

export const CHANNELS = ['canary', 'beta', 'stable'] as const;
export type Channel = (typeof CHANNELS)[number];

export const CONTACT_ROLES = ['technical', 'billing', 'admin', 'other'] as const;
export type ContactRole = (typeof CONTACT_ROLES)[number];

export const TOUCHPOINT_KINDS = ['call', 'email', 'meeting', 'note', 'other'] as const;
export type TouchpointKind = (typeof TOUCHPOINT_KINDS)[number];

export const SCOPES = [
  'customers:read',
  'customers:write',
  'contacts:write',
  'deployments:read',
  'deployments:write',
  'subscriptions:read',
  'subscriptions:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** A field's value before and after an update, as events and the audit stream carry it. */
export type Changes = Record<string, { before: unknown; after: unknown }>;

/** The fields of `patch` whose value differs from `current`, with both values. */
export function diff<T extends Record<string, unknown>>(current: T, patch: Partial<T>): Changes {
  const changes: Changes = {};
  for (const [field, after] of Object.entries(patch)) {
    if (after === undefined) continue;
    const before = (current as Record<string, unknown>)[field] ?? null;
    if (before !== after) changes[field] = { before, after };
  }
  return changes;
}

/** `current` with the `after` values of `changes` applied. */
export function applyChanges<T extends object>(current: T, changes: Changes): T {
  const next = { ...current } as Record<string, unknown>;
  for (const [field, { after }] of Object.entries(changes)) next[field] = after;
  return next as unknown as T;
}
