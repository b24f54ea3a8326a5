// A route's policy, stated where the route is declared: who may call it and how large a body it
// takes. Both are values in the route's `middleware` list, tagged so that `declareRoute` can read
// them (the same way `rateLimiting()` marks a limiter):
//
// - an access rule is the middleware that enforces it, tagged with what it admits (`guard`), or,
//   where the route's handler enforces the rule itself (it records the refusal, or answers in an
//   order its spec fixes), a no-op that only states the rule (`checkedByHandler`);
// - a body limit (`bodyLimit`) is a no-op tag: the app's body-limit middleware (body-limit.ts)
//   applies it, because a 413 comes before authentication, and app middleware runs before a
//   route's own. It finds the limit on the route the request matched (`routePolicy`), never by
//   path. A route that states none takes its service's default.
//
// `declareRoute` documents both (401/403 with the rule's refusals, 413 with the actual limit, and
// the rule names as the operation's `x-access`), and every route of the three services states an
// access rule: the generated authorisation matrix (tests/platform/authorization-matrix.test.ts)
// reads `x-access` and refuses a route without one.

import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';

/** Who a rule admits, by name (`signed-in`, `admin`, `scope:customers:read`), and what it answers the others. */
export interface Access {
  rule: string;
  /** The refusals the rule answers, for the route's document: `{ 401: '...', 403: '...' }`. */
  refusals?: { 401?: string; 403?: string };
}

export interface BodyLimit {
  maxBytes: number;
  /**
   * The route reads its body as a stream, never whole (an ingest batch may be far larger than a
   * request should hold in memory): the app refuses only a declared Content-Length over the
   * limit; the route's reader counts bytes as they arrive and answers 413 past the limit, and it
   * refuses NUL characters itself.
   */
  streamed?: boolean;
}

/** What the app's own middleware reads of the matched route. */
export interface RoutePolicy {
  access: Access[];
  bodyLimit: BodyLimit;
}

const ACCESS = Symbol('access rule');
const BODY_LIMIT = Symbol('body limit');
const POLICY = Symbol('route policy');

type Tagged<T> = MiddlewareHandler<any> & Record<symbol, T>;

const passThrough = (): MiddlewareHandler<any> => async (_c, next) => {
  await next();
};

/** Marks `middleware` as the enforcement of `access`. */
export function guard<M extends MiddlewareHandler<any>>(access: Access, middleware: M): M {
  return Object.assign(middleware, { [ACCESS]: access });
}

/** States `access` for a route whose handler enforces it itself. */
export function checkedByHandler(access: Access): MiddlewareHandler<any> {
  return guard(access, passThrough());
}

/** The rule of a route anyone may call (health, login, a public chat). */
export const anyone = (): MiddlewareHandler<any> => checkedByHandler({ rule: 'anyone' });

/** The route takes a body of up to `maxBytes` (instead of its service's default). */
export function bodyLimit(maxBytes: number, options: { streamed?: boolean } = {}): MiddlewareHandler<any> {
  return Object.assign(passThrough(), { [BODY_LIMIT]: { maxBytes, ...options } satisfies BodyLimit });
}

const tagged = <T>(middleware: unknown, tag: symbol): T | undefined =>
  typeof middleware === 'function' && tag in middleware ? (middleware as Tagged<T>)[tag] : undefined;

/** The access rules and body limit a route's middleware states (`fallback`: the service's default limit). */
export function policyOf(middleware: unknown[], fallback: BodyLimit): RoutePolicy {
  const access = middleware.map((m) => tagged<Access>(m, ACCESS)).filter((a): a is Access => !!a);
  const limits = middleware.map((m) => tagged<BodyLimit>(m, BODY_LIMIT)).filter((l): l is BodyLimit => !!l);
  if (limits.length > 1) throw new Error('a route states one body limit');
  return { access, bodyLimit: limits[0] ?? fallback };
}

/** The first middleware of a declared route: carries its policy for the app's middleware to find. */
export function policyMarker(policy: RoutePolicy): MiddlewareHandler<any> {
  return Object.assign(passThrough(), { [POLICY]: policy });
}

/**
 * The policy of the route this request matched (the first declared route for its method and
 * path, the one that answers), or undefined when no declared route matches (a 404, or a method
 * the path does not take). Hono matches every handler of a request before the first runs, so the
 * app's middleware can read it.
 */
export function routePolicy(c: Context): RoutePolicy | undefined {
  for (const route of matchedRoutes(c)) {
    if (route.method === 'ALL') continue;
    const policy = tagged<RoutePolicy>(route.handler, POLICY);
    if (policy) return policy;
  }
  return undefined;
}
