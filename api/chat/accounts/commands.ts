// Account use cases: register (reservations, invite, owner claim, keys, account, first session),
// log in (password, then TOTP or a backup code when it is on), recover; and the caller's own
// account: change the profile, change the password, delete. The slice's application layer and
// the only caller of the command runner for accounts: each function does the read-model lookups
// its decision needs, then runs the commands. The uniqueness of usernames and emails, the single
// use of an invite and of a recovery code, and the one owner per instance are decided by their
// streams, so racing requests cannot both win.

import { randomUUID } from 'node:crypto';
import { hashCode, newRecoveryCode } from '../../../crypto/codes.ts';
import { hashPassword, verifyPassword } from '../../../crypto/password.ts';
import { hashToken } from '../../../crypto/tokens.ts';
import { accountDecider } from '../../../domain/chat/accounts/decider.ts';
import { CHAT_RESERVATIONS, chatUserStream, inviteStream, keysStream } from '../../../domain/chat/streams.ts';
import { invalidInvite, inviteDecider } from '../../../domain/chat/invites/decider.ts';
import { keysDecider } from '../../../domain/chat/keys/decider.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { reservationDecider, reservationStream } from '../../../domain/shared/reservation.ts';
import { part, type CommandContext, type TogetherPart } from '../../../infra/commands.ts';
import {
  chatAccountCount,
  chatUserById,
  chatUserByUsername,
  type ChatUserRow,
} from '../../../projections/chat/accounts.ts';
import { inviteIdByCodeHash } from '../../../projections/chat/invites.ts';
import { totpOf } from '../../../projections/chat/totp.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { reserveOrResume } from '../../shared/reservations.ts';
import type { ChatDeps } from '../deps.ts';
import { toBase64 } from '../keys/bytes.ts';
import { revokeSessionsOf, startSession, type TokenPair } from '../sessions/sessions.ts';
import { checkSecondFactor } from '../totp/commands.ts';
import { checkKeys, checkPassword, ownView, prekeysOf, wrongPassword, type Registration } from './accounts.ts';

export type AccountDeps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'jwtSecret' | 'config' | 'sealKey'>;

const iso = (deps: Pick<ChatDeps, 'clock'>) => deps.clock.now().toISOString();

type ReservedKind = 'chat_username' | 'chat_email';
const takenBy = (kind: ReservedKind) =>
  new ApiError(409, `${kind.slice(5)}_taken`, `${kind === 'chat_email' ? 'email' : 'username'} is already taken`);

/** A reservation's key: the normalised value, hashed for an email. */
function reservationKey(kind: ReservedKind, value: string): string {
  const normal = value.trim().toLowerCase();
  return kind === 'chat_email' ? hashToken(normal) : normal;
}

/**
 * Reserve the value; the id to register the account under: `ownerId`, or that of a reservation
 * whose account was never registered (a registration that failed half way, completed by its
 * retry; api/shared/reservations.ts).
 */
async function reserve(
  deps: AccountDeps,
  kind: ReservedKind,
  value: string,
  ownerId: string,
  context: CommandContext,
): Promise<string> {
  try {
    return await reserveOrResume(
      deps.commands,
      {
        kind,
        category: CHAT_RESERVATIONS[kind],
        key: reservationKey(kind, value),
        ownerId,
        ownerStream: chatUserStream,
      },
      context,
    );
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') throw takenBy(kind);
    throw error;
  }
}

const ownerReservation = (userId: string) =>
  part(reservationStream(CHAT_RESERVATIONS.chat_owner, 'instance'), reservationDecider, {
    type: 'Reserve',
    kind: 'chat_owner',
    owner_id: userId,
  });

const runPart = (deps: AccountDeps, p: TogetherPart, context: CommandContext) =>
  deps.commands.run(p.stream, p.decider, p.command, context);

/** The first account of an instance owns it: a reservation only one registration can win. */
async function claimOwnership(deps: AccountDeps, userId: string, context: CommandContext): Promise<boolean> {
  if ((await chatAccountCount(deps.db)) > 0) return false;
  try {
    await runPart(deps, ownerReservation(userId), context);
    return true;
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') return false;
    throw error;
  }
}

/** What a registration writes once its account id is known: the invite's redemption, the keys and the account. */
interface Writes {
  redeem: TogetherPart | null;
  keys: TogetherPart;
  account: (isOwner: boolean) => TogetherPart;
}

function writesOf(
  deps: AccountDeps,
  input: Registration,
  userId: string,
  inviteId: string | null,
  passwordHash: string,
  recoveryCodeHash: string,
): Writes {
  return {
    redeem: inviteId
      ? part(inviteStream(inviteId), inviteDecider, { type: 'Redeem', user_id: userId, at: iso(deps) })
      : null,
    keys: part(keysStream(userId), keysDecider, {
      type: 'RegisterKeys',
      user_id: userId,
      identity_key: toBase64(input.identity_key),
      signed_prekey: {
        key_id: input.signed_prekey.key_id,
        public_key: toBase64(input.signed_prekey.public_key),
        signature: toBase64(input.signed_prekey.signature),
      },
      one_time_prekeys: prekeysOf(input.one_time_prekeys),
      at: iso(deps),
      resume: true,
    }),
    account: (isOwner) =>
      part(chatUserStream(userId), accountDecider, {
        type: 'Register',
        user_id: userId,
        username: input.username,
        display_name: input.display_name?.trim() || input.username,
        email: input.email.trim(),
        password_hash: passwordHash,
        recovery_code_hash: recoveryCodeHash,
        is_owner: isOwner,
        invite_id: inviteId,
        at: iso(deps),
      }),
  };
}

/**
 * A fresh registration in one log transaction (where the store allows it: `canRunTogether`):
 * the username and email reserved, the invite redeemed, the instance's ownership claimed (the
 * first account), the keys and the account, all or nothing. False when the username is reserved
 * already: the caller then goes the one-append-after-another way, which answers 409 for a live
 * account and completes a registration that failed half way (on EventStoreDB, or before this).
 */
async function registerTogether(
  deps: AccountDeps,
  input: Registration,
  writes: Writes,
  userId: string,
  context: CommandContext,
): Promise<boolean> {
  const reservations = (['chat_username', 'chat_email'] as const).map((kind) =>
    part(
      reservationStream(
        CHAT_RESERVATIONS[kind],
        reservationKey(kind, kind === 'chat_email' ? input.email : input.username),
      ),
      reservationDecider,
      { type: 'Reserve', kind, owner_id: userId },
    ),
  );
  let claim = (await chatAccountCount(deps.db)) === 0;
  for (;;) {
    try {
      await deps.commands.runTogether(
        [
          ...reservations,
          ...(writes.redeem ? [writes.redeem] : []),
          ...(claim ? [ownerReservation(userId)] : []),
          writes.keys,
          writes.account(claim),
        ],
        context,
      );
      return true;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.code === 'chat_username_taken') return false;
      // Reserved by another registration, finished or not: taken.
      if (error.code === 'chat_email_taken') throw takenBy('chat_email');
      // Another registration owns the instance: this one registers as a plain account.
      if (error.code === 'chat_owner_taken' && claim) {
        claim = false;
        continue;
      }
      throw error;
    }
  }
}

/**
 * Register an account: in one log transaction where the store allows it (PostgreSQL), else (and
 * for a username reserved before) one append after another, reservations first: a registration
 * that stops between them is completed by its retry under the reservation's id.
 */
export async function register(
  deps: AccountDeps,
  input: Registration,
  userAgent: string | null,
  context: CommandContext,
) {
  const mode = deps.config.registration;
  if (mode === 'closed') throw new ApiError(403, 'registration_closed', 'registration is closed on this instance');
  let inviteId: string | null = null;
  if (mode === 'invite') {
    inviteId = input.invite_code ? await inviteIdByCodeHash(deps.db, hashToken(input.invite_code.trim())) : null;
    if (!inviteId) throw invalidInvite();
  }
  checkKeys(input);
  const taken = await chatUserByUsername(deps.db, input.username);
  if (taken) throw new ApiError(409, 'username_taken', 'username is already taken');

  const passwordHash = await hashPassword(input.password);
  const recoveryCode = newRecoveryCode();
  const fresh: string = randomUUID();
  let userId = fresh;
  let ctx = { ...context, actor: { kind: 'visitor' as const, id: fresh } };
  const together =
    deps.commands.canRunTogether &&
    (await registerTogether(
      deps,
      input,
      writesOf(deps, input, fresh, inviteId, passwordHash, hashCode(recoveryCode)),
      fresh,
      ctx,
    ));
  if (!together) {
    // A registration of this username that failed half way is completed under its id.
    userId = await reserve(deps, 'chat_username', input.username, fresh, ctx);
    ctx = { ...context, actor: { kind: 'visitor' as const, id: userId } };
    // Reserved by another registration that never finished (under another username): still taken.
    if ((await reserve(deps, 'chat_email', input.email, userId, ctx)) !== userId) throw takenBy('chat_email');
    const writes = writesOf(deps, input, userId, inviteId, passwordHash, hashCode(recoveryCode));
    if (writes.redeem) await runPart(deps, writes.redeem, ctx);
    const isOwner = await claimOwnership(deps, userId, ctx);
    await runPart(deps, writes.keys, ctx);
    try {
      await runPart(deps, writes.account(isOwner), ctx);
    } catch (error) {
      // Another attempt at this username registered first.
      if (error instanceof DomainError && error.code === 'user_exists') throw takenBy('chat_username');
      throw error;
    }
  }
  const user = (await chatUserById(deps.db, userId))!;
  const tokens = await startSession(deps, user, 'register', userAgent, ctx);
  return {
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token,
    user: ownView(user, { totp_enabled: false }),
    recovery_code: recoveryCode,
  };
}

export async function login(
  deps: AccountDeps,
  input: { username: string; password: string; totp_code?: string | undefined },
  userAgent: string | null,
  context: CommandContext,
): Promise<TokenPair & { user: ReturnType<typeof ownView> }> {
  const user = await checkPassword(deps, input.username, input.password);
  if (user.suspended_at) throw new ApiError(403, 'suspended', 'this account is suspended');
  const ctx = { ...context, actor: { kind: 'user' as const, id: user.id } };
  const totpEnabled = await checkSecondFactor(deps, user, input.totp_code, ctx);
  const tokens = await startSession(deps, user, 'login', userAgent, ctx);
  return {
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token,
    user: ownView(user, { totp_enabled: totpEnabled }),
  };
}

/** Reset the password with the recovery code; every session ends; a new code replaces the used one. */
export async function recover(
  deps: AccountDeps,
  input: { username: string; recovery_code: string; new_password: string },
  context: CommandContext,
): Promise<{ recovery_code: string }> {
  const user = await chatUserByUsername(deps.db, input.username);
  const passwordHash = await hashPassword(input.new_password);
  if (!user) throw new DomainError('unauthorized', 'invalid_recovery', 'invalid username or recovery code');
  const ctx = { ...context, actor: { kind: 'visitor' as const, id: user.id } };
  const recoveryCode = newRecoveryCode();
  await deps.commands.run(
    chatUserStream(user.id),
    accountDecider,
    {
      type: 'Recover',
      presented_code_hash: hashCode(input.recovery_code),
      password_hash: passwordHash,
      new_recovery_code_hash: hashCode(recoveryCode),
      at: iso(deps),
    },
    ctx,
  );
  await revokeSessionsOf(deps, user.id, 'recovery', ctx);
  return { recovery_code: recoveryCode };
}

/** The caller's own account (401 once it is gone: its token names no one). */
export async function ownAccount(deps: Pick<ChatDeps, 'db'>, userId: string): Promise<ChatUserRow> {
  const user = await chatUserById(deps.db, userId);
  if (!user || user.deleted_at) throw new ApiError(401, 'unauthorized', 'invalid or expired access token');
  return user;
}

/** The account as its owner sees it, with whether TOTP is on. */
export async function ownAccountView(deps: Pick<ChatDeps, 'db'>, user: ChatUserRow) {
  return ownView(user, { totp_enabled: (await totpOf(deps.db, user.id))?.enabled ?? false });
}

/** The caller's own account, once their password is confirmed (403 `wrong_password` otherwise). */
async function confirmPassword(deps: Pick<ChatDeps, 'db'>, userId: string, password: string): Promise<ChatUserRow> {
  const user = await ownAccount(deps, userId);
  if (!user.password_hash || !(await verifyPassword(password, user.password_hash))) throw wrongPassword();
  return user;
}

export interface ProfileChanges {
  display_name?: string | undefined;
  avatar_url?: string | null | undefined;
  bio?: string | null | undefined;
  pronouns?: string | null | undefined;
}

/** Change display name, avatar URL, bio or pronouns (an empty string clears, as null does); the account as changed. */
export async function updateProfile(
  deps: AccountDeps,
  input: { user_id: string; changes: ProfileChanges },
  context: CommandContext,
): Promise<ChatUserRow> {
  const changes = Object.fromEntries(
    Object.entries(input.changes)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, v === '' ? null : v]),
  );
  await deps.commands.run(
    chatUserStream(input.user_id),
    accountDecider,
    { type: 'UpdateProfile', changes, at: iso(deps) },
    context,
  );
  return ownAccount(deps, input.user_id);
}

/** Change the password (the current one first); every other session ends. */
export async function changePassword(
  deps: AccountDeps,
  input: { user_id: string; session_id: string; current_password: string; new_password: string },
  context: CommandContext,
): Promise<void> {
  await confirmPassword(deps, input.user_id, input.current_password);
  await deps.commands.run(
    chatUserStream(input.user_id),
    accountDecider,
    { type: 'ChangePassword', password_hash: await hashPassword(input.new_password), at: iso(deps) },
    context,
  );
  await revokeSessionsOf(deps, input.user_id, 'password_changed', context, input.session_id);
}

/** Delete the account (the password first): its keys and sessions go. */
export async function deleteAccount(
  deps: AccountDeps,
  input: { user_id: string; password: string },
  context: CommandContext,
): Promise<void> {
  await confirmPassword(deps, input.user_id, input.password);
  await deps.commands.run(chatUserStream(input.user_id), accountDecider, { type: 'Delete', at: iso(deps) }, context);
  await deps.commands.run(keysStream(input.user_id), keysDecider, { type: 'RemoveKeys', at: iso(deps) }, context);
  await revokeSessionsOf(deps, input.user_id, 'account_deleted', context);
}
