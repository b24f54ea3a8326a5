// Account use cases: register (reservations, invite, owner claim, keys, account, first session),
// log in (password, then TOTP or a backup code when it is on), recover. Each step is a command
// on its own aggregate; the uniqueness of usernames and emails, the single use of an invite and
// of a recovery code, and the one owner per instance are decided by their streams, so racing
// requests cannot both win.

import { randomUUID } from 'node:crypto';
import { hashCode, newRecoveryCode } from '../../../crypto/codes.ts';
import { hashPassword, verifyPassword } from '../../../crypto/password.ts';
import { signedPrekeyVerifies, validIdentityKey } from '../../../crypto/prekeys.ts';
import { hashToken } from '../../../crypto/tokens.ts';
import { accountDecider } from '../../../domain/chat/accounts/decider.ts';
import { chatUserStream } from '../../../domain/chat/accounts/events.ts';
import { invalidInvite, inviteDecider } from '../../../domain/chat/invites/decider.ts';
import { inviteStream } from '../../../domain/chat/invites/events.ts';
import { keysDecider } from '../../../domain/chat/keys/decider.ts';
import { keysStream, type PublicPrekey } from '../../../domain/chat/keys/events.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { reservationDecider, reservationStream } from '../../../domain/shared/reservation.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { reserveOrResume } from '../../shared/reservations.ts';
import { chatAccountCount, chatUserById, chatUserByUsername, type ChatUserRow } from '../../../projections/chat/accounts.ts';
import { inviteIdByCodeHash } from '../../../projections/chat/invites.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { ChatDeps } from '../deps.ts';
import { revokeSessionsOf, startSession, type TokenPair } from '../sessions/sessions.ts';
import { checkSecondFactor } from '../totp/second-factor.ts';
import { toBase64 } from '../keys/bytes.ts';

export type AccountDeps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'jwtSecret' | 'config' | 'sealKey'>;

export interface Registration {
  username: string;
  display_name?: string | undefined;
  email: string;
  password: string;
  identity_key: number[];
  signed_prekey: { key_id: number; public_key: number[]; signature: number[] };
  one_time_prekeys: { key_id: number; public_key: number[] }[];
  invite_code?: string | undefined;
}

const iso = (deps: Pick<ChatDeps, 'clock'>) => deps.clock.now().toISOString();
const bytes = (values: number[]) => Uint8Array.from(values);

/** The account as its owner sees it (auth responses, /api/account/me). */
export function ownView(user: ChatUserRow, extra: { totp_enabled?: boolean } = {}) {
  return {
    id: user.id, username: user.username, display_name: user.display_name, email: user.email ?? '',
    avatar_url: user.avatar_url, bio: user.bio, pronouns: user.pronouns,
    is_admin: user.is_admin, is_owner: user.is_owner, is_bot: user.is_bot,
    created_at: user.created_at.toISOString(), ...extra,
  };
}

/** The keys must be what the e2ee library will accept from a bundle; checked before anything is written. */
export function checkKeys(input: Pick<Registration, 'identity_key' | 'signed_prekey' | 'one_time_prekeys'>): void {
  const ids = input.one_time_prekeys.map((p) => p.key_id);
  if (new Set(ids).size !== ids.length) throw new ApiError(400, 'duplicate_prekey_id', 'one-time prekey ids repeat within the upload');
  const identity = bytes(input.identity_key);
  if (!validIdentityKey(identity)) throw new ApiError(400, 'invalid_identity_key', 'identity_key is not a valid Ed25519 public key');
  if (!signedPrekeyVerifies(identity, bytes(input.signed_prekey.public_key), bytes(input.signed_prekey.signature))) {
    throw new ApiError(400, 'bad_signature', 'signed_prekey.signature does not verify against identity_key');
  }
}

export const prekeysOf = (list: { key_id: number; public_key: number[] }[]): PublicPrekey[] =>
  list.map((p) => ({ key_id: p.key_id, public_key: toBase64(p.public_key) }));

const takenBy = (kind: 'chat_username' | 'chat_email') => new ApiError(409, `${kind.slice(5)}_taken`, `${kind === 'chat_email' ? 'email' : 'username'} is already taken`);

/**
 * Reserve the value; the id to register the account under: `ownerId`, or that of a reservation
 * whose account was never registered (a registration that failed half way, completed by its
 * retry; api/shared/reservations.ts).
 */
async function reserve(deps: AccountDeps, kind: 'chat_username' | 'chat_email', value: string, ownerId: string, context: CommandContext): Promise<string> {
  const normal = value.trim().toLowerCase();
  const key = kind === 'chat_email' ? hashToken(normal) : normal;
  try {
    return await reserveOrResume(deps.commands, { kind, key, ownerId, ownerStream: chatUserStream }, context);
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') throw takenBy(kind);
    throw error;
  }
}

/** The first account of an instance owns it: a reservation only one registration can win. */
async function claimOwnership(deps: AccountDeps, userId: string, context: CommandContext): Promise<boolean> {
  if ((await chatAccountCount(deps.db)) > 0) return false;
  try {
    await deps.commands.run(reservationStream('chat_owner', 'instance'), reservationDecider, { type: 'Reserve', kind: 'chat_owner', owner_id: userId }, context);
    return true;
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'conflict') return false;
    throw error;
  }
}

export async function register(deps: AccountDeps, input: Registration, userAgent: string | null, context: CommandContext) {
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
  // A registration of this username that failed half way is completed under its id.
  const fresh = randomUUID();
  const userId = await reserve(deps, 'chat_username', input.username, fresh, { ...context, actor: { kind: 'visitor' as const, id: fresh } });
  const ctx = { ...context, actor: { kind: 'visitor' as const, id: userId } };
  // Reserved by another registration that never finished (under another username): still taken.
  if ((await reserve(deps, 'chat_email', input.email, userId, ctx)) !== userId) throw takenBy('chat_email');
  if (inviteId) await deps.commands.run(inviteStream(inviteId), inviteDecider, { type: 'Redeem', user_id: userId, at: iso(deps) }, ctx);
  const isOwner = await claimOwnership(deps, userId, ctx);
  await deps.commands.run(keysStream(userId), keysDecider, {
    type: 'RegisterKeys', user_id: userId, identity_key: toBase64(input.identity_key),
    signed_prekey: { key_id: input.signed_prekey.key_id, public_key: toBase64(input.signed_prekey.public_key), signature: toBase64(input.signed_prekey.signature) },
    one_time_prekeys: prekeysOf(input.one_time_prekeys), at: iso(deps), resume: true,
  }, ctx);
  const recoveryCode = newRecoveryCode();
  try {
    await deps.commands.run(chatUserStream(userId), accountDecider, {
      type: 'Register', user_id: userId, username: input.username, display_name: input.display_name?.trim() || input.username,
      email: input.email.trim(), password_hash: passwordHash, recovery_code_hash: hashCode(recoveryCode), is_owner: isOwner, invite_id: inviteId, at: iso(deps),
    }, ctx);
  } catch (error) {
    // Another attempt at this username registered first.
    if (error instanceof DomainError && error.code === 'user_exists') throw takenBy('chat_username');
    throw error;
  }
  const user = (await chatUserById(deps.db, userId))!;
  const tokens = await startSession(deps, user, 'register', userAgent, ctx);
  return { access_token: tokens.access_token, refresh_token: tokens.refresh_token, user: ownView(user, { totp_enabled: false }), recovery_code: recoveryCode };
}

// A hash of nothing in particular, so an unknown username costs the same time as a known one.
const DECOY_HASH = 'scrypt$17$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export const wrongCredentials = () => new ApiError(401, 'invalid_credentials', 'invalid username or password');

/** The live account behind a username and password, or the 401. */
export async function checkPassword(deps: AccountDeps, username: string, password: string): Promise<ChatUserRow> {
  const user = await chatUserByUsername(deps.db, username);
  const ok = await verifyPassword(password, user?.password_hash ?? DECOY_HASH);
  if (!ok || !user?.password_hash) throw wrongCredentials();
  return user;
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
  return { access_token: tokens.access_token, refresh_token: tokens.refresh_token, user: ownView(user, { totp_enabled: totpEnabled }) };
}

/** Reset the password with the recovery code; every session ends; a new code replaces the used one. */
export async function recover(deps: AccountDeps, input: { username: string; recovery_code: string; new_password: string }, context: CommandContext): Promise<{ recovery_code: string }> {
  const user = await chatUserByUsername(deps.db, input.username);
  const passwordHash = await hashPassword(input.new_password);
  if (!user) throw new DomainError('unauthorized', 'invalid_recovery', 'invalid username or recovery code');
  const ctx = { ...context, actor: { kind: 'visitor' as const, id: user.id } };
  const recoveryCode = newRecoveryCode();
  await deps.commands.run(chatUserStream(user.id), accountDecider, {
    type: 'Recover', presented_code_hash: hashCode(input.recovery_code), password_hash: passwordHash,
    new_recovery_code_hash: hashCode(recoveryCode), at: iso(deps),
  }, ctx);
  await revokeSessionsOf(deps, user.id, 'recovery', ctx);
  return { recovery_code: recoveryCode };
}
