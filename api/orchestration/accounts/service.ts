// Account use cases: create, register, log in and out, forward-auth sign-in, rotate keys, change
// role or activation. Each one turns into commands on the user/session aggregates (or audit
// events), and returns only after the read models show the change.

import { randomUUID } from 'node:crypto';
import { hashPassword, verifyPassword } from '../../../crypto/password.ts';
import { hashToken, randomId } from '../../../crypto/tokens.ts';
import { auditStream, type RotationRefusalReason, type SecurityEvent } from '../../../domain/orchestration/security/events.ts';
import { sessionDecider, sessionStream } from '../../../domain/orchestration/sessions/decider.ts';
import { userDecider, userStream, type AuthSource, type Role } from '../../../domain/orchestration/users/decider.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { toAppend, type CommandContext } from '../../../infra/commands.ts';
import { WrongExpectedRevisionError } from '../../../infra/eventstore/port.ts';
import type { Platform } from '../../../infra/platform.ts';
import { reserve } from '../../../infra/reservations.ts';
import { keyMaterial, newApiKey } from './keys.ts';
import { userById, userByUsername, type UserRow } from './queries.ts';

const now = () => new Date().toISOString();

export interface NewAccount {
  username: string;
  email: string;
  role: Role;
  password?: string;
  auth_source: AuthSource;
}

/** Create an account with a fresh API key; the key is returned once, here. */
export async function createAccount(
  platform: Platform,
  input: NewAccount,
  context: CommandContext,
  beforeCreate: (userId: string) => Promise<void> = async () => {},
): Promise<{ user: UserRow; apiKey: string }> {
  const userId = randomUUID();
  await reserve(platform.store, 'username', input.username, userId, context);
  await reserve(platform.store, 'email', input.email, userId, context);
  await beforeCreate(userId);
  const apiKey = newApiKey();
  await platform.execute(userStream(userId), userDecider, {
    type: 'CreateUser', user_id: userId, username: input.username, email: input.email, role: input.role,
    auth_source: input.auth_source, key: keyMaterial(platform.sealKey, userId, apiKey),
    password_hash: input.password ? await hashPassword(input.password) : null, by: context.actor.id, at: now(),
  }, context);
  return { user: (await userById(platform.pool, userId))!, apiKey };
}

/** First-run registration: only while no local password account exists. */
export async function register(platform: Platform, input: { username: string; email: string; password: string }, context: CommandContext): Promise<UserRow> {
  const closed = new DomainError('conflict', 'already_registered', 'registration is closed: a local account already exists');
  const { rows } = await platform.pool.query(`SELECT 1 FROM users WHERE auth_source = 'local' AND password_hash IS NOT NULL LIMIT 1`);
  if (rows.length) throw closed;
  const { user } = await createAccount(platform, { ...input, role: 'admin', auth_source: 'local' }, context, async (userId) => {
    // Two racing registrations: the claim stream lets exactly one through.
    const claim = toAppend({ type: 'LocalRegistrationClaimed', data: { user_id: userId } }, context);
    try {
      await platform.store.append('registration-local', [claim], { expected: 'no_stream' });
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) throw closed;
      throw error;
    }
  });
  return user;
}

export async function verifyLogin(user: UserRow | null, password: string): Promise<boolean> {
  // Hash even for an unknown account, so the answer takes the same time either way.
  const stored = user?.password_hash ?? 'scrypt$17$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
  const ok = await verifyPassword(password, stored);
  return ok && !!user?.password_hash && user.is_active;
}

/** Start a session for the user; returns the session id (goes into the cookie, never the log). */
export async function startSession(platform: Platform, user: UserRow, via: 'password' | 'forward_auth', context: CommandContext): Promise<string> {
  const sessionId = randomId(32);
  const sessionHash = hashToken(sessionId);
  await platform.execute(sessionStream(sessionHash), sessionDecider, { type: 'StartSession', session_hash: sessionHash, user_id: user.id, via, at: now() }, context);
  return sessionId;
}

export async function endSession(platform: Platform, sessionHash: string, context: CommandContext): Promise<void> {
  await platform.execute(sessionStream(sessionHash), sessionDecider, { type: 'EndSession', at: now() }, context);
}

/** Append one security audit event (its own stream) and wait for the audit read models. */
export async function recordSecurityEvent(platform: Platform, event: SecurityEvent, context: CommandContext): Promise<void> {
  const { position } = await platform.store.append(auditStream(randomUUID()), [toAppend(event, context)], { expected: 'no_stream' });
  await platform.engine.waitFor(position, [event.type]);
}

export async function refuseRotation(
  platform: Platform,
  refusal: { actor_id: string | null; actor_kind: string; target_user_id: string | null; route: 'self' | 'admin' | 'cli'; reason: RotationRefusalReason },
  context: CommandContext,
): Promise<void> {
  await recordSecurityEvent(platform, { type: 'ApiKeyRotationRefused', data: { ...refusal, at: now() } }, context);
}

/** Rotate a user's key; the old key is refused once this returns. Returns the new key. */
export async function rotateKey(platform: Platform, userId: string, reason: 'self_service' | 'admin' | 'recovery_cli', context: CommandContext): Promise<{ apiKey: string; rotatedAt: string }> {
  const apiKey = newApiKey();
  const at = now();
  await platform.execute(userStream(userId), userDecider, {
    type: 'RotateApiKey', key: keyMaterial(platform.sealKey, userId, apiKey), by: context.actor.id, reason, at,
  }, context);
  return { apiKey, rotatedAt: at };
}

export async function updateAccount(platform: Platform, userId: string, change: { role?: Role; is_active?: boolean }, context: CommandContext): Promise<void> {
  if (change.role !== undefined) {
    await platform.execute(userStream(userId), userDecider, { type: 'ChangeRole', role: change.role, by: context.actor.id, at: now() }, context);
  }
  if (change.is_active !== undefined) {
    await platform.execute(userStream(userId), userDecider, { type: 'SetActive', is_active: change.is_active, by: context.actor.id, at: now() }, context);
  }
}

/**
 * Forward-auth sign-in: provision the account on first sight, and set its stored role from the
 * groups (the only moment the role follows the identity provider).
 */
export async function forwardAuthSignIn(platform: Platform, identity: { username: string; email: string; role: Role }, context: CommandContext): Promise<UserRow> {
  const existing = await userByUsername(platform.pool, identity.username);
  if (!existing) {
    const email = identity.email || `${identity.username}@forward-auth.invalid`;
    const { user } = await createAccount(platform, { username: identity.username, email, role: identity.role, auth_source: 'forward_auth' }, context);
    return user;
  }
  if (existing.auth_source !== 'forward_auth') {
    throw new DomainError('forbidden', 'identity_conflict', 'this username belongs to a local account');
  }
  if (existing.role !== identity.role) await updateAccount(platform, existing.id, { role: identity.role }, context);
  return (await userById(platform.pool, existing.id))!;
}
