// Session use cases: start one (a token pair), rotate its refresh token, revoke one or all.
// A refresh token is `<session id>.<43 random characters>`: opaque to clients, it names its
// session's stream, so a token already rotated away still finds the session it belongs to (the
// reuse that revokes it). Only its SHA-256 hash reaches the log.

import { randomUUID } from 'node:crypto';
import { hashToken, randomId } from '../../../crypto/tokens.ts';
import { chatSessionDecider, invalidRefreshToken } from '../../../domain/chat/sessions/decider.ts';
import type { RevokeReason, SessionOrigin } from '../../../domain/chat/sessions/events.ts';
import { chatSessionStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { liveSessionsOf, sessionPrincipal } from '../../../projections/chat/sessions.ts';
import { isUuid } from '../../shared/params.ts';
import { issueAccessToken } from '../auth.ts';
import type { ChatDeps } from '../deps.ts';

export type SessionDeps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'jwtSecret'>;

export interface TokenPair {
  access_token: string;
  refresh_token: string;
}

const iso = (deps: Pick<ChatDeps, 'clock'>) => deps.clock.now().toISOString();

export async function startSession(
  deps: SessionDeps,
  user: { id: string; is_admin: boolean; is_owner: boolean },
  origin: SessionOrigin,
  userAgent: string | null,
  context: CommandContext,
): Promise<TokenPair & { session_id: string }> {
  const sessionId = randomUUID();
  const refreshToken = `${sessionId}.${randomId(32)}`;
  await deps.commands.run(
    chatSessionStream(sessionId),
    chatSessionDecider,
    {
      type: 'Start',
      session_id: sessionId,
      user_id: user.id,
      refresh_hash: hashToken(refreshToken),
      origin,
      user_agent: userAgent ? userAgent.slice(0, 256) : null,
      at: iso(deps),
    },
    context,
  );
  const access = await issueAccessToken(deps, {
    user_id: user.id,
    is_admin: user.is_admin,
    is_owner: user.is_owner,
    session_id: sessionId,
  });
  return { access_token: access, refresh_token: refreshToken, session_id: sessionId };
}

export class RefreshReuseError extends Error {
  constructor() {
    super('refresh token already used: the session is revoked');
  }
}

/** A new pair for a live refresh token; a reused one revokes its session (RefreshReuseError). */
export async function rotateRefreshToken(
  deps: SessionDeps,
  presented: string,
  context: CommandContext,
): Promise<TokenPair> {
  const sessionId = presented.split('.')[0] ?? '';
  if (!isUuid(sessionId)) throw invalidRefreshToken();
  const next = `${sessionId}.${randomId(32)}`;
  const { events, state } = await deps.commands.run(
    chatSessionStream(sessionId),
    chatSessionDecider,
    {
      type: 'Refresh',
      presented_hash: hashToken(presented),
      new_hash: hashToken(next),
      at: iso(deps),
    },
    context,
  );
  if (events.some((e) => e.type === 'SessionRevoked')) throw new RefreshReuseError();
  const principal = await sessionPrincipal(deps.db, sessionId, state.user_id!);
  if (!principal) throw invalidRefreshToken(); // the account was deleted meanwhile
  const access = await issueAccessToken(deps, { ...principal, session_id: sessionId });
  return { access_token: access, refresh_token: next };
}

export async function revokeSession(
  deps: SessionDeps,
  sessionId: string,
  reason: RevokeReason,
  context: CommandContext,
): Promise<void> {
  await deps.commands.run(
    chatSessionStream(sessionId),
    chatSessionDecider,
    { type: 'Revoke', reason, at: iso(deps) },
    context,
  );
}

/** Revoke every live session of the user except `keep`; returns how many were revoked. */
export async function revokeSessionsOf(
  deps: SessionDeps,
  userId: string,
  reason: RevokeReason,
  context: CommandContext,
  keep: string | null = null,
): Promise<number> {
  const sessions = (await liveSessionsOf(deps.db, userId)).filter((s) => s.id !== keep);
  for (const s of sessions) await revokeSession(deps, s.id, reason, context);
  return sessions.length;
}
