// Pagination as the specs define it: query `limit` and `offset`, no link headers, and a body
// carrying `total`, `limit`, `offset`. Each endpoint names its default and maximum; a value out
// of range is clamped and an unreadable one falls back to the default (the specs drop unknown
// query input rather than refuse it).
//
// The clamp is this file's, once: `clampedInt` is the query schema of any such integer (a page's
// `limit` and `offset`, a search's `limit`, a window's `days`), and `clampInt` the same rule for a
// number a route has read itself (to report, say, `limit_clamped`).

import { z } from '@hono/zod-openapi';

export interface PageRule {
  defaultLimit: number;
  maxLimit: number;
}

/** An integer with a default, clamped to min-max (min 1 unless given). */
export interface IntRange {
  default: number;
  min?: number;
  max: number;
}

/** The value clamped to the range; none (undefined or NaN) is the default. */
export function clampInt(value: number | undefined, { default: fallback, min = 1, max }: IntRange): number {
  return value === undefined || Number.isNaN(value) ? fallback : Math.min(max, Math.max(min, value));
}

/** A query integer: an unreadable one is the default, one out of range is clamped. */
export function clampedInt(
  range: IntRange,
  description = `default ${range.default}, clamped to ${range.min ?? 1}-${range.max}`,
) {
  return z.coerce
    .number()
    .int()
    .catch(range.default)
    .transform((n) => clampInt(n, range))
    .default(range.default)
    .openapi({ description, type: 'integer' });
}

export function pageQuery({ defaultLimit, maxLimit }: PageRule) {
  return z.object({
    limit: clampedInt({ default: defaultLimit, max: maxLimit }),
    offset: clampedInt({ default: 0, min: 0, max: Infinity }, 'default 0'),
  });
}

/** The body fields every paginated answer carries beside its items. */
export const pageFields = { total: z.number().int(), limit: z.number().int(), offset: z.number().int() };

export function page<Key extends string, Item>(
  key: Key,
  items: Item[],
  total: number,
  { limit, offset }: { limit: number; offset: number },
) {
  return { [key]: items, total, limit, offset } as { [K in Key]: Item[] } & {
    total: number;
    limit: number;
    offset: number;
  };
}
