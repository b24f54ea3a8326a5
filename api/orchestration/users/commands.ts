// The users slice's application layer (the only caller of the command runner for it): create, register, log in and out, forward-auth sign-in, rotate keys, change
// role or activation, and the principals from configuration. Each one turns into commands on
// the user and session aggregates (or audit facts), and returns only after the read models show
// the change. Used by the routes, the forward-auth middleware and the composition root (main/).

import { randomUUID } from 'node:crypto';
import { hashPassword, verifyPassword } from '../../../crypto/password.ts';
import { hashToken, randomId } from '../../../crypto/tokens.ts';
import type {
  RotationRefusalReason,
  SecurityEvent,
  AuthSource,
  PrincipalType,
  Role,
} from '../../../domain/orchestration/users/events.ts';
import {
  auditStream,
  ORCH_RESERVATIONS,
  userStream,
  REGISTRATION_STREAM,
  sessionStream,
} from '../../../domain/orchestration/streams.ts';
import {
  BOOTSTRAP_ADMIN_ID,
  RUNNER_ID,
  userDecider,
  userNotFound,
} from '../../../domain/orchestration/users/decider.ts';
import { registrationClosed, registrationDecider } from '../../../domain/orchestration/users/registration.ts';
import { sessionDecider } from '../../../domain/orchestration/users/session.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { part, type CommandContext, type TogetherPart } from '../../../infra/commands.ts';
import { reservationDecider, reservationStream } from '../../../domain/shared/reservation.ts';
import { ApiError, rateLimited } from '../../shared/http-errors.ts';
import { reserveOrResume, takenError } from '../../shared/reservations.ts';
import {
  localPasswordAccountExists,
  userByEmail,
  userById,
  userByUsername,
  type UserRow,
} from '../../../projections/orchestration/users.ts';
import { MISSING_KEY } from '../auth/guards.ts';
import type { AccountDeps, OrchDeps } from '../deps.ts';
import { keyMaterial, newApiKey } from './keys.ts';

export interface NewAccount {
  username: string;
  email: string;
  role: Role;
  password?: string;
  auth_source: AuthSource;
  /** Default `account`; spawned agents' credentials are `agent`. */
  principal_type?: PrincipalType;
}

const iso = (deps: AccountDeps) => deps.clock.now().toISOString();

const normalised = (value: string) => value.trim().toLowerCase();
/** Usernames compare as typed (trimmed, lower-cased); emails are personal data, so their streams are named by a hash. */
const reservationKey = (kind: 'username' | 'email', value: string) =>
  kind === 'email' ? hashToken(normalised(value)) : normalised(value);

/**
 * Reserve the value; the id to create the user under: `ownerId`, or that of a reservation whose
 * user was never created (a creation that failed half way; api/shared/reservations.ts).
 */
async function reserve(
  deps: AccountDeps,
  kind: 'username' | 'email',
  value: string,
  ownerId: string,
  context: CommandContext,
): Promise<string> {
  return reserveOrResume(
    deps.commands,
    { kind, category: ORCH_RESERVATIONS[kind], key: reservationKey(kind, value), ownerId, ownerStream: userStream },
    context,
  );
}

const isTaken = (error: unknown) =>
  error instanceof DomainError &&
  (error.code === takenError('username').code || error.code === takenError('email').code);

/**
 * Create an account with a fresh API key; the key is returned once, here. `claim` is a further
 * stream's command the creation needs (first-run registration's claim), appended with it.
 *
 * Where the store appends several streams in one transaction (PostgreSQL), the username and
 * e-mail reservations, the claim and the user are appended together: all or nothing. A value
 * already reserved goes the second way below, which answers 409 for a live account and takes
 * over a reservation orphaned before.
 *
 * Where it cannot (EventStoreDB), and for a reserved value: reserve, claim, then create, one
 * append after the other. A creation that failed after its reservations is completed under the
 * reservations' id by the next creation of the same username.
 */
export async function createAccount(
  deps: AccountDeps,
  input: NewAccount,
  context: CommandContext,
  claim?: (userId: string) => TogetherPart,
  newUserId: string = randomUUID(),
): Promise<{ user: UserRow; apiKey: string }> {
  const apiKey = newApiKey();
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  const create = (userId: string) =>
    part(userStream(userId), userDecider, {
      type: 'CreateUser',
      user_id: userId,
      username: input.username,
      email: input.email,
      role: input.role,
      auth_source: input.auth_source,
      principal_type: input.principal_type,
      key: keyMaterial(deps.sealKey, userId, apiKey),
      password_hash: passwordHash,
      by: context.actor.id,
      at: iso(deps),
    });
  if (deps.commands.canRunTogether) {
    const reservation = (kind: 'username' | 'email', value: string) =>
      part(reservationStream(ORCH_RESERVATIONS[kind], reservationKey(kind, value)), reservationDecider, {
        type: 'Reserve',
        kind,
        owner_id: newUserId,
      });
    try {
      await deps.commands.runTogether(
        [
          reservation('username', input.username),
          reservation('email', input.email),
          ...(claim ? [claim(newUserId)] : []),
          create(newUserId),
        ],
        context,
      );
      return { user: (await userById(deps.db, newUserId))!, apiKey };
    } catch (error) {
      if (!isTaken(error)) throw error;
    }
  }
  // A creation that failed after its reservations is completed under its id (same username).
  const userId = await reserve(deps, 'username', input.username, newUserId, context);
  // Reserved by another creation that never finished (under another username): still taken.
  if ((await reserve(deps, 'email', input.email, userId, context)) !== userId) throw takenError('email');
  if (claim) {
    const { stream, decider, command } = claim(userId);
    await deps.commands.run(stream, decider, command, context);
  }
  const user = create(userId);
  try {
    await deps.commands.run(user.stream, user.decider, user.command, context);
  } catch (error) {
    // Another attempt at this username created the user first.
    if (error instanceof DomainError && error.code === 'user_exists') throw takenError('username');
    throw error;
  }
  return { user: (await userById(deps.db, userId))!, apiKey };
}

/** First-run registration: only while no local password account exists (the claim stream settles races). */
export async function register(
  deps: AccountDeps,
  input: { username: string; email: string; password: string },
  context: CommandContext,
): Promise<UserRow> {
  if (await localPasswordAccountExists(deps.db)) throw registrationClosed();
  const { user } = await createAccount(deps, { ...input, role: 'admin', auth_source: 'local' }, context, (userId) =>
    part(REGISTRATION_STREAM, registrationDecider, { type: 'ClaimLocalRegistration', user_id: userId }),
  );
  return user;
}

// A hash of nothing in particular, so an unknown account costs the same time as a known one.
const DECOY_HASH = 'scrypt$17$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export async function verifyLogin(user: UserRow | null, password: string): Promise<boolean> {
  const ok = await verifyPassword(password, user?.password_hash ?? DECOY_HASH);
  return ok && !!user?.password_hash && user.is_active;
}

const LOGIN_WINDOW_MS = 15 * 60 * 1000;
export const LOGIN_LIMITS = {
  account: { limit: 5, windowMs: LOGIN_WINDOW_MS },
  address: { limit: 20, windowMs: LOGIN_WINDOW_MS },
};

const wrongCredentials = () => new ApiError(401, 'invalid_credentials', 'invalid email or password');

/**
 * A password login from a client address: 429 when the address failed too often, 401
 * `invalid_credentials` for a wrong password or a locked account (alike), each failure recorded;
 * else a session for the account. Returns the account and the session id (for the cookie).
 */
export async function logIn(
  deps: AccountDeps & Pick<OrchDeps, 'limiter'>,
  input: { email: string; password: string; peer: string },
  context: CommandContext,
): Promise<{ user: UserRow; sessionId: string }> {
  const { email, password, peer } = input;
  const failed = (userId: string | null, reason: 'bad_credentials' | 'locked' | 'rate_limited') =>
    recordSecurityEvent(
      deps,
      {
        type: 'LoginFailed',
        data: { user_id: userId, email_hash: hashToken(email.trim().toLowerCase()), reason, peer, at: iso(deps) },
      },
      context,
    );
  const addressKey = `login:address:${peer}`;
  const address = await deps.limiter.peek(addressKey, LOGIN_LIMITS.address);
  if (!address.allowed) {
    await failed(null, 'rate_limited');
    throw rateLimited(address.retryAfterSeconds, 'too many failed logins from this address');
  }
  const user = await userByEmail(deps.db, email);
  const accountKey = `login:account:${user?.id ?? hashToken(email.trim().toLowerCase())}`;
  // A locked account answers exactly like a wrong password.
  if (!(await deps.limiter.peek(accountKey, LOGIN_LIMITS.account)).allowed) {
    await deps.limiter.consume(addressKey, LOGIN_LIMITS.address);
    await failed(user?.id ?? null, 'locked');
    throw wrongCredentials();
  }
  if (!(await verifyLogin(user, password)) || !user) {
    await deps.limiter.consume(accountKey, LOGIN_LIMITS.account);
    await deps.limiter.consume(addressKey, LOGIN_LIMITS.address);
    await failed(user?.id ?? null, 'bad_credentials');
    throw wrongCredentials();
  }
  await deps.limiter.reset(accountKey);
  const sessionId = await startSession(deps, user, 'password', {
    actor: { kind: 'user', id: user.id },
    correlationId: context.correlationId,
  });
  return { user, sessionId };
}

/** Start a session for the user; returns the session id (goes into the cookie, never the log). */
export async function startSession(
  deps: AccountDeps,
  user: UserRow,
  via: 'password' | 'forward_auth',
  context: CommandContext,
): Promise<string> {
  const sessionId = randomId(32);
  const sessionHash = hashToken(sessionId);
  await deps.commands.run(
    sessionStream(sessionHash),
    sessionDecider,
    { type: 'StartSession', session_hash: sessionHash, user_id: user.id, via, at: iso(deps) },
    context,
  );
  return sessionId;
}

export async function endSession(deps: AccountDeps, sessionHash: string, context: CommandContext): Promise<void> {
  await deps.commands.run(sessionStream(sessionHash), sessionDecider, { type: 'EndSession', at: iso(deps) }, context);
}

/** A security fact (failed login, refused rotation) on its own audit stream. */
export async function recordSecurityEvent(
  deps: AccountDeps,
  event: SecurityEvent,
  context: CommandContext,
): Promise<void> {
  await deps.commands.record(auditStream(randomUUID()), event, context, { expected: 'no_stream' });
}

export async function refuseRotation(
  deps: AccountDeps,
  refusal: {
    actor_id: string | null;
    actor_kind: string;
    target_user_id: string | null;
    route: 'self' | 'admin' | 'cli';
    reason: RotationRefusalReason;
  },
  context: CommandContext,
): Promise<void> {
  await recordSecurityEvent(deps, { type: 'ApiKeyRotationRefused', data: { ...refusal, at: iso(deps) } }, context);
}

export const ROTATION_MESSAGES: Record<RotationRefusalReason, string> = {
  api_key_rotation_requires_interactive_session:
    'API keys can only be rotated from an interactive session, not with a bearer credential',
  api_key_rotation_csrf: 'same-origin or CSRF check failed',
  api_key_rotation_requires_admin: "rotating another account's key requires the admin role",
  api_key_rotation_not_found: 'no such user',
  api_key_rotation_service_principal: "the runner's key is rotated through its configuration, not here",
  api_key_rotation_agent_credential: 'agent credentials rotate through POST /api/v1/agents/{id}/credential/rotate',
  unauthenticated: MISSING_KEY,
};
export const ROTATION_STATUS: Record<RotationRefusalReason, 401 | 403 | 404 | 409> = {
  api_key_rotation_requires_interactive_session: 403,
  api_key_rotation_csrf: 403,
  api_key_rotation_requires_admin: 403,
  api_key_rotation_not_found: 404,
  api_key_rotation_service_principal: 409,
  api_key_rotation_agent_credential: 409,
  unauthenticated: 401,
};

/**
 * An attempt at rotating a key (an account's, or an agent's credential), as its route saw it:
 * who asks, on which route, the target it names (an id, when the value is one), and the first of
 * the route's own checks (bearer credential, session, CSRF, admin role) that refused it, if any.
 */
export interface RotationAttempt {
  actor_id: string | null;
  actor_kind: string;
  route: 'self' | 'admin';
  target_user_id: string | null;
  refused: RotationRefusalReason | null;
}

/** Record the attempt's refusal and throw its answer (the one constructor of every rotation refusal, `api_key_rotation_not_found` too). */
export async function refuseRotationAttempt(
  deps: AccountDeps,
  attempt: RotationAttempt,
  reason: RotationRefusalReason,
  context: CommandContext,
): Promise<never> {
  const { actor_id, actor_kind, target_user_id, route } = attempt;
  await refuseRotation(deps, { actor_id, actor_kind, target_user_id, route, reason }, context);
  throw new ApiError(
    ROTATION_STATUS[reason],
    reason === 'unauthenticated' ? 'unauthorized' : reason,
    ROTATION_MESSAGES[reason],
  );
}

/**
 * Rotate an account's key: refused (and recorded) for the route's own refusal; on the admin
 * route, also for an unknown target, a service principal or an agent credential. `self` is the
 * caller's account (the self route's target). Answers the account and its new key.
 */
export async function rotateAccountKey(
  deps: AccountDeps,
  attempt: RotationAttempt,
  self: UserRow | null,
  context: CommandContext,
): Promise<{ user: UserRow; apiKey: string; rotatedAt: string }> {
  if (attempt.refused) return refuseRotationAttempt(deps, attempt, attempt.refused, context);
  let target = self;
  if (attempt.route === 'admin') {
    target = attempt.target_user_id ? await userById(deps.db, attempt.target_user_id) : null;
    if (!target) return refuseRotationAttempt(deps, attempt, 'api_key_rotation_not_found', context);
    if (target.principal_type === 'service')
      return refuseRotationAttempt(deps, attempt, 'api_key_rotation_service_principal', context);
    if (target.principal_type === 'agent')
      return refuseRotationAttempt(deps, attempt, 'api_key_rotation_agent_credential', context);
  }
  const { apiKey, rotatedAt } = await rotateKey(
    deps,
    target!.id,
    attempt.route === 'self' ? 'self_service' : 'admin',
    context,
  );
  return { user: target!, apiKey, rotatedAt };
}

/** Rotate a user's key; the old key is refused once this returns. Returns the new key. */
export async function rotateKey(
  deps: AccountDeps,
  userId: string,
  reason: 'self_service' | 'admin' | 'recovery_cli',
  context: CommandContext,
): Promise<{ apiKey: string; rotatedAt: string }> {
  const apiKey = newApiKey();
  const at = iso(deps);
  await deps.commands.run(
    userStream(userId),
    userDecider,
    {
      type: 'RotateApiKey',
      key: keyMaterial(deps.sealKey, userId, apiKey),
      by: context.actor.id,
      reason,
      at,
    },
    context,
  );
  return { apiKey, rotatedAt: at };
}

export async function updateAccount(
  deps: AccountDeps,
  userId: string,
  change: { role?: Role; is_active?: boolean },
  context: CommandContext,
): Promise<void> {
  if (change.role !== undefined) {
    await deps.commands.run(
      userStream(userId),
      userDecider,
      { type: 'ChangeRole', role: change.role, by: context.actor.id, at: iso(deps) },
      context,
    );
  }
  if (change.is_active !== undefined) {
    await deps.commands.run(
      userStream(userId),
      userDecider,
      { type: 'SetActive', is_active: change.is_active, by: context.actor.id, at: iso(deps) },
      context,
    );
  }
}

/**
 * An admin's change of an account's role or activation: 404 `user_not_found` (a malformed id
 * is its route's 404, before this), 409 `not_an_account` for service principals and agent credentials, 409
 * `cannot_demote_self` when the admin would deactivate or demote themselves. Answers the row as changed.
 */
export async function changeAccount(
  deps: AccountDeps,
  adminId: string,
  id: string,
  change: { role?: Role; is_active?: boolean },
  context: CommandContext,
): Promise<UserRow> {
  const target = await userById(deps.db, id);
  if (!target) throw userNotFound();
  if (target.principal_type !== 'account')
    throw new ApiError(409, 'not_an_account', 'service principals and agent credentials are managed elsewhere');
  if (target.id === adminId && (change.is_active === false || (change.role && change.role !== 'admin'))) {
    throw new ApiError(409, 'cannot_demote_self', 'an admin cannot deactivate or demote their own account');
  }
  await updateAccount(deps, target.id, change, context);
  return (await userById(deps.db, target.id))!;
}

/**
 * Forward-auth sign-in: provision the account on first sight, and set its stored role from the
 * groups (the only moment the role follows the identity provider).
 */
export async function forwardAuthSignIn(
  deps: AccountDeps,
  identity: { username: string; email: string; role: Role },
  context: CommandContext,
): Promise<UserRow> {
  const existing = await userByUsername(deps.db, identity.username);
  if (!existing) {
    const email = identity.email || `${identity.username}@forward-auth.invalid`;
    const { user } = await createAccount(
      deps,
      { username: identity.username, email, role: identity.role, auth_source: 'forward_auth' },
      context,
    );
    return user;
  }
  if (existing.auth_source !== 'forward_auth') {
    throw new DomainError('forbidden', 'identity_conflict', 'this username belongs to a local account');
  }
  if (existing.role !== identity.role) await updateAccount(deps, existing.id, { role: identity.role }, context);
  return (await userById(deps.db, existing.id))!;
}

export type ConfiguredOutcome = 'created' | 'rotated' | 'unchanged';

/**
 * A principal whose key comes from configuration (the bootstrap admin, the runner): created on
 * first start, unchanged on a restart with the same key, rotated as an event when the key changed.
 */
export async function ensureConfiguredPrincipal(
  deps: AccountDeps,
  which: 'admin' | 'runner',
  apiKey: string,
): Promise<ConfiguredOutcome> {
  const [id, username, type] =
    which === 'admin'
      ? [BOOTSTRAP_ADMIN_ID, 'admin', 'EnsureBootstrapAdmin' as const]
      : [RUNNER_ID, 'runner', 'EnsureRunner' as const];
  const context = { actor: { kind: 'system' as const, id: 'bootstrap' }, correlationId: null };
  await reserve(deps, 'username', username, id, context);
  const { events } = await deps.commands.run(
    userStream(id),
    userDecider,
    { type, key: keyMaterial(deps.sealKey, id, apiKey), at: iso(deps) },
    context,
  );
  return events[0]?.type === 'UserCreated'
    ? 'created'
    : events[0]?.type === 'UserApiKeyRotated'
      ? 'rotated'
      : 'unchanged';
}
