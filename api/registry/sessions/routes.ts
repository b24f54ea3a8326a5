// Interactive sign-in surfaces: who am I (`GET /api/v1/auth/me`, any authenticated caller: the
// principal, its role or scopes, and for interactive users the CSRF token their writes carry),
// and the OIDC login, callback and logout (oidc.ts).

import { createRoute, z } from '@hono/zod-openapi';
import { SCOPES } from '../../../domain/registry/catalog.ts';
import { ok } from '../../shared/openapi.ts';
import { access, csrfTokenOf, setCsrfCookie } from '../auth/access.ts';
import { isInteractive } from '../auth/principal.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, registryErrors, registryRouter } from '../router.ts';
import { oidcRoutes } from './oidc.ts';

const Me = z
  .object({
    kind: z.enum(['token', 'session', 'forward_auth']),
    name: z.string(),
    email: z.string().nullable(),
    role: z.enum(['admin', 'readonly', 'token']),
    scopes: z
      .array(z.enum(SCOPES))
      .openapi({ description: "a token's scopes (empty for interactive users, whose role decides)" }),
    csrf_token: z.string().nullable().openapi({
      description: 'interactive users: send it as X-CSRF-Token on writes (also set as the registry_csrf cookie)',
    }),
  })
  .openapi('RegistryMe');

export function sessionRoutes(deps: RegistryDeps) {
  const app = registryRouter();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/auth/me',
      tags: ['sign-in'],
      summary: 'The calling principal',
      middleware: [access(deps, 'any')] as const,
      responses: { 200: ok(Me, 'the caller'), ...registryErrors(AUTH_ERRORS) },
    }),
    (c) => {
      const p = c.get('principal');
      if (isInteractive(p)) {
        const csrf = csrfTokenOf(deps, p);
        setCsrfCookie(c, deps, csrf);
        return c.json({ kind: p.kind, name: p.name, email: p.email, role: p.role, scopes: [], csrf_token: csrf }, 200);
      }
      const token = p.kind === 'token' ? p.token : null;
      return c.json(
        {
          kind: 'token' as const,
          name: token?.name ?? '',
          email: null,
          role: 'token' as const,
          scopes: token?.scopes ?? [],
          csrf_token: null,
        },
        200,
      );
    },
  );

  app.route('/', oidcRoutes(deps));
  return app;
}
