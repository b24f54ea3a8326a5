// Forward-auth SSO: a reverse proxy in a trusted network asserts the user in identity headers.
// A request with such headers and no session of that user is a sign-in: the account is
// provisioned on first sight, its stored role set from the groups (only here), a session
// started and its cookies set. Headers from any other peer are ignored.

import type { Context } from 'hono';
import type { Role } from '../../../domain/orchestration/users/events.ts';
import type { Config } from '../../../infra/config.ts';
import type { UserRow } from '../../../projections/orchestration/users.ts';
import { peerAddress } from '../../shared/peer.ts';
import type { OrchDeps } from '../deps.ts';
import { forwardAuthSignIn, startSession } from '../users/commands.ts';
import { setSessionCookies } from './session-cookies.ts';
import { trustedNets } from './trusted-nets.ts';

export function roleFromGroups(config: Config, groups: string[]): Role {
  if (groups.includes(config.forwardAuth.adminGroup)) return 'admin';
  if (groups.includes(config.forwardAuth.userGroup)) return 'user';
  return 'readonly';
}

export function forwardAuth(deps: OrchDeps) {
  const fa = deps.config.forwardAuth;
  const trusted = fa.enabled ? trustedNets(fa.trustedNets) : () => false;
  return {
    /** The username a trusted proxy asserts, if any. */
    assertedUser(c: Context): string | undefined {
      return fa.enabled && trusted(peerAddress(c)) ? c.req.header(fa.userHeader)?.trim() || undefined : undefined;
    },
    async signIn(c: Context, username: string): Promise<{ user: UserRow; sessionId: string } | null> {
      const groups = (c.req.header(fa.groupsHeader) ?? '')
        .split(fa.groupsDelim)
        .map((g) => g.trim())
        .filter(Boolean);
      const correlationId = c.get('requestId') as string;
      const user = await forwardAuthSignIn(
        deps,
        {
          username,
          email: c.req.header(fa.emailHeader)?.trim() ?? '',
          role: roleFromGroups(deps.config, groups),
        },
        { actor: { kind: 'user', id: null }, correlationId },
      );
      if (!user.is_active) return null;
      const sessionId = await startSession(deps, user, 'forward_auth', {
        actor: { kind: 'user', id: user.id },
        correlationId,
      });
      setSessionCookies(c, deps, sessionId);
      return { user, sessionId };
    },
  };
}
