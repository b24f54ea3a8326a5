// Pagination as the specs define it: query `limit` and `offset`, no link headers, and a body
// carrying `total`, `limit`, `offset`. Each endpoint names its default and maximum; a value out
// of range is clamped and an unreadable one falls back to the default (the specs drop unknown
// query input rather than refuse it).

import { z } from '@hono/zod-openapi';

export interface PageRule {
  defaultLimit: number;
  maxLimit: number;
}

export function pageQuery({ defaultLimit, maxLimit }: PageRule) {
  return z.object({
    limit: z.coerce.number().int().catch(defaultLimit).transform((n) => Math.min(maxLimit, Math.max(1, n))).default(defaultLimit)
      .openapi({ description: `default ${defaultLimit}, clamped to 1-${maxLimit}`, type: 'integer' }),
    offset: z.coerce.number().int().catch(0).transform((n) => Math.max(0, n)).default(0)
      .openapi({ description: 'default 0', type: 'integer' }),
  });
}

/** The body fields every paginated answer carries beside its items. */
export const pageFields = { total: z.number().int(), limit: z.number().int(), offset: z.number().int() };

export function page<Key extends string, Item>(key: Key, items: Item[], total: number, { limit, offset }: { limit: number; offset: number }) {
  return { [key]: items, total, limit, offset } as { [K in Key]: Item[] } & { total: number; limit: number; offset: number };
}
