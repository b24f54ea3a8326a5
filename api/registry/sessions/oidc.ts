// OIDC sign-in (authorization code with PKCE, through `openid-client`):
//   GET  /api/v1/auth/login     redirects to the provider; the PKCE verifier, state and nonce
//                               travel in a sealed, HttpOnly, SameSite=Lax cookie for 10 minutes
//   GET  /api/v1/auth/callback  exchanges the code, reads the groups claim (from the ID token,
//                               else from userinfo), starts a session (`registry_sess`, HttpOnly,
//                               SameSite=Lax, 12 hours) with its CSRF cookie, and redirects
//   POST /api/v1/auth/logout    ends the session (CSRF-checked like every session write)
// A member of REGISTRY_OIDC_ADMIN_GROUP is an admin; everyone else is read-only. The provider's
// metadata is discovered on first use (and again after a failure). Login and callback are the
// sign-in itself, so they take no credential; without OIDC configured they answer 404.

import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import * as oidc from 'openid-client';
import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import { REGISTRY_SESSION_TTL_MS } from '../../../domain/registry/sessions/decider.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { anyone } from '../../shared/route-policy.ts';
import { access, CSRF_COOKIE, csrfTokenOf, setCsrfCookie } from '../auth/access.ts';
import { SESSION_COOKIE, type RegistryEnv } from '../auth/principal.ts';
import type { RegistryDeps } from '../deps.ts';
import { AUTH_ERRORS, registryErrors, registryRouter } from '../router.ts';
import { endSession, startSession } from './commands.ts';

const LOGIN_COOKIE = 'registry_oidc';
const LOGIN_PATH = '/api/v1/auth';
const LOGIN_TTL_S = 600;
const SEAL_CONTEXT = 'registry_oidc_login';
const SCOPES = 'openid email profile groups';
const DEFAULT_RETURN = '/api/v1/docs';

interface LoginState {
  verifier: string;
  state: string;
  nonce: string;
  returnTo: string;
  expires: number;
}

const tags = ['sign-in'];

export function oidcRoutes(deps: RegistryDeps) {
  const app = registryRouter();
  const settings = deps.config.registry.oidc;
  let discovered: Promise<oidc.Configuration> | null = null;

  const publicUrl = (c: Context) => deps.config.registry.publicUrl ?? new URL(c.req.url).origin;
  const secure = (c: Context) => publicUrl(c).startsWith('https:');

  function configuration(): Promise<oidc.Configuration> {
    if (!settings)
      throw new ApiError(
        404,
        'oidc_not_configured',
        'OIDC sign-in is not configured (REGISTRY_OIDC_ISSUER, REGISTRY_OIDC_CLIENT_ID)',
      );
    discovered ??= oidc
      .discovery(
        new URL(settings.issuer),
        settings.clientId,
        settings.clientSecret ?? undefined,
        settings.clientSecret ? undefined : oidc.None(),
        { execute: settings.issuer.startsWith('http:') ? [oidc.allowInsecureRequests] : [] },
      )
      .catch((error: Error) => {
        discovered = null;
        deps.log.warn('registry_oidc_discovery_failed', { issuer: settings.issuer, error: error.message });
        throw new ApiError(503, 'oidc_unavailable', 'the OIDC provider cannot be reached');
      });
    return discovered;
  }

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/auth/login',
      tags,
      summary: 'Start an OIDC sign-in (redirects to the provider)',
      middleware: anyone(),
      request: {
        query: z.object({
          return_to: z
            .string()
            .max(2000)
            .optional()
            .openapi({ description: 'a path on this service to land on (default /api/v1/docs)' }),
        }),
      },
      responses: {
        302: { description: "to the provider's authorization endpoint" },
        ...registryErrors({ 404: 'oidc_not_configured', 503: 'oidc_unavailable' }),
      },
    }),
    async (c) => {
      const config = await configuration();
      const verifier = oidc.randomPKCECodeVerifier();
      const login: LoginState = {
        verifier,
        state: oidc.randomState(),
        nonce: oidc.randomNonce(),
        // Only a path on this service: never an open redirect.
        returnTo: /^\/(?![/\\])/.test(c.req.valid('query').return_to ?? '')
          ? c.req.valid('query').return_to!
          : DEFAULT_RETURN,
        expires: deps.clock.now().getTime() + LOGIN_TTL_S * 1000,
      };
      const target = oidc.buildAuthorizationUrl(config, {
        redirect_uri: `${publicUrl(c)}/api/v1/auth/callback`,
        scope: SCOPES,
        state: login.state,
        nonce: login.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      setCookie(c, LOGIN_COOKIE, sealSecret(deps.sealKey, JSON.stringify(login), SEAL_CONTEXT), {
        httpOnly: true,
        sameSite: 'Lax',
        secure: secure(c),
        path: LOGIN_PATH,
        maxAge: LOGIN_TTL_S,
      });
      c.header('Cache-Control', 'no-store');
      return c.redirect(target.href, 302);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/api/v1/auth/callback',
      tags,
      summary: "The provider's redirect back: starts the session",
      middleware: anyone(),
      request: {
        query: z
          .object({
            code: z.string().optional(),
            state: z.string().optional(),
            iss: z.string().optional(),
            error: z.string().optional(),
          })
          .passthrough(),
      },
      responses: {
        302: { description: 'signed in: the session cookie is set; on to return_to' },
        ...registryErrors({
          401: 'login_failed (no or expired login state, refused by the provider, or a failed check)',
          404: 'oidc_not_configured',
          503: 'oidc_unavailable',
        }),
      },
    }),
    async (c) => {
      const config = await configuration();
      const login = readLogin(c);
      deleteCookie(c, LOGIN_COOKIE, { path: LOGIN_PATH });
      if (!login)
        throw new ApiError(
          401,
          'login_failed',
          'no sign-in in progress (or it took over 10 minutes): start again at /api/v1/auth/login',
        );
      const callbackUrl = new URL(`${publicUrl(c)}/api/v1/auth/callback`);
      callbackUrl.search = new URL(c.req.url).search;
      let claims: Record<string, unknown>;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: login.verifier,
          expectedState: login.state,
          expectedNonce: login.nonce,
          idTokenExpected: true,
        });
        claims = { ...tokens.claims() };
        if (claims[settings!.groupsClaim] === undefined && tokens.access_token) {
          claims = { ...(await oidc.fetchUserInfo(config, tokens.access_token, String(claims.sub))), ...claims };
        }
      } catch (error) {
        deps.log.warn('registry_oidc_login_failed', {
          request_id: c.get('requestId'),
          error: (error as Error).message,
        });
        throw new ApiError(401, 'login_failed', 'the sign-in was refused or could not be verified');
      }
      const raw = claims[settings!.groupsClaim];
      const groups = Array.isArray(raw) ? raw.map(String) : typeof raw === 'string' ? raw.split(/[\s,]+/) : [];
      const subject = String(claims.sub);
      const email = typeof claims.email === 'string' ? claims.email : null;
      const name = String(claims.preferred_username ?? claims.name ?? email ?? subject);
      const { sessionId, sessionHash } = await startSession(
        deps,
        { subject, name, email, role: groups.includes(settings!.adminGroup) ? 'admin' : 'readonly' },
        { actor: { kind: 'user', id: `oidc:${email ?? subject}` }, correlationId: c.get('requestId') },
      );
      setCookie(c, SESSION_COOKIE, sessionId, {
        httpOnly: true,
        sameSite: 'Lax',
        secure: secure(c),
        path: '/',
        maxAge: REGISTRY_SESSION_TTL_MS / 1000,
      });
      setCsrfCookie(
        c,
        deps,
        csrfTokenOf(deps, { kind: 'session', role: 'readonly', subject, name, email, sessionId, sessionHash }),
      );
      c.header('Cache-Control', 'no-store');
      return c.redirect(`${publicUrl(c)}${login.returnTo}`, 302);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/api/v1/auth/logout',
      tags,
      summary: 'End the session (interactive users; CSRF-checked)',
      middleware: [access(deps, 'session')] as const,
      responses: { 204: { description: 'signed out; the cookies are cleared' }, ...registryErrors(AUTH_ERRORS) },
    }),
    async (c) => {
      const p = c.get('principal');
      if (p.kind === 'session') {
        await endSession(deps, p.sessionHash, {
          actor: { kind: 'user', id: `oidc:${p.email ?? p.subject}` },
          correlationId: c.get('requestId'),
        });
      }
      deleteCookie(c, SESSION_COOKIE, { path: '/' });
      deleteCookie(c, CSRF_COOKIE, { path: '/' });
      return c.body(null, 204);
    },
  );

  function readLogin(c: Context<RegistryEnv>): LoginState | null {
    const sealed = getCookie(c, LOGIN_COOKIE);
    if (!sealed) return null;
    try {
      const login = JSON.parse(openSecret(deps.sealKey, sealed, SEAL_CONTEXT)) as LoginState;
      return login.expires > deps.clock.now().getTime() ? login : null;
    } catch {
      return null;
    }
  }

  return app;
}
