// Path parameters, declared one way. An id in a path is a UUID: `uuidParams('cid', 'uid')`
// declares each as `format: 'uuid'`, and declareRoute (route-declaration.ts) then checks it after
// the route's authentication and before its handler, answering the route's documented 404 (or
// its validation status where it documents none) for a value that is not one. A handler or a
// command therefore never checks an id's shape itself: what reaches it is a UUID.
//
// The schema stays `z.string()` rather than `z.uuid()`: a malformed id names nothing, which is a
// 404 with the route's own code (`profile_not_found`), not the validator's 400/422.

import { z } from '@hono/zod-openapi';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether an id taken from a body or a query is a UUID (path ids are checked by their route). */
export const isUuid = (value: string) => UUID.test(value);

/** One UUID path parameter's schema. */
export const uuidParam = (name: string) => z.string().openapi({ param: { name, in: 'path' }, format: 'uuid' });

/** The params object of a route whose path holds these UUIDs: `request: { params: uuidParams('id') }`. */
export function uuidParams<const Name extends string>(...names: Name[]): z.ZodObject<{ [K in Name]: z.ZodString }> {
  return z.object(Object.fromEntries(names.map((name) => [name, uuidParam(name)])) as { [K in Name]: z.ZodString });
}
