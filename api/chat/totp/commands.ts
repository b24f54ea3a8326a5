// TOTP's use cases: set up, verify (enable), disable, and the second factor at sign-in (spending
// a code or a backup code, called by the accounts slice's login). The slice's application layer
// and the only caller of the command runner for TOTP: each function checks what its decision
// needs (the set-up secret and the code, the password), then runs the TOTP decider.

import { hashCode, newBackupCode } from '../../../crypto/codes.ts';
import { verifyPassword } from '../../../crypto/password.ts';
import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import { newTotpSecret, totpStep } from '../../../crypto/totp.ts';
import { BACKUP_CODE_COUNT, totpDecider } from '../../../domain/chat/totp/decider.ts';
import { totpStream } from '../../../domain/chat/streams.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { chatUserById } from '../../../projections/chat/accounts.ts';
import { totpOf } from '../../../projections/chat/totp.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { wrongPassword } from '../accounts/accounts.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'sealKey'>;

export const totpSealContext = (userId: string) => `chat_totp:${userId}`;

/** Starts set-up: a new secret, sealed at rest, not active until verified. Returns the secret. */
export async function setupTotp(deps: Deps, input: { user_id: string }, context: CommandContext): Promise<string> {
  const secret = newTotpSecret();
  await deps.commands.run(
    totpStream(input.user_id),
    totpDecider,
    {
      type: 'Setup',
      user_id: input.user_id,
      secret_sealed: sealSecret(deps.sealKey, secret, totpSealContext(input.user_id)),
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return secret;
}

/** Enables TOTP with a code of the set-up secret; returns the backup codes (shown once). */
export async function verifyTotp(
  deps: Deps,
  input: { user_id: string; code: string },
  context: CommandContext,
): Promise<string[]> {
  const row = await totpOf(deps.db, input.user_id);
  if (row?.enabled) throw new ApiError(409, 'totp_already_enabled', 'TOTP is already enabled');
  if (!row?.secret_sealed) throw new ApiError(400, 'totp_not_set_up', 'call /api/totp/setup first');
  const now = deps.clock.now();
  const step = totpStep(
    openSecret(deps.sealKey, row.secret_sealed, totpSealContext(input.user_id)),
    input.code.trim(),
    now.getTime(),
  );
  if (step === null) throw new ApiError(401, 'invalid_totp_code', 'invalid TOTP code');
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  await deps.commands.run(
    totpStream(input.user_id),
    totpDecider,
    {
      type: 'Enable',
      user_id: input.user_id,
      counter: step,
      backup_code_hashes: codes.map(hashCode),
      at: now.toISOString(),
    },
    context,
  );
  return codes;
}

/** Turns TOTP off: the caller's password first (403 otherwise). */
export async function disableTotp(
  deps: Deps,
  input: { user_id: string; password: string },
  context: CommandContext,
): Promise<void> {
  const user = await chatUserById(deps.db, input.user_id);
  if (!user?.password_hash || !(await verifyPassword(input.password, user.password_hash))) throw wrongPassword();
  await deps.commands.run(
    totpStream(input.user_id),
    totpDecider,
    { type: 'Disable', user_id: input.user_id, at: deps.clock.now().toISOString() },
    context,
  );
}

/**
 * The second factor at login: with TOTP on, `code` must be the code of the current time step
 * (±1) not used before, or one of the account's unused backup codes (each works once). Both are
 * decided by the account's TOTP stream, so two logins racing with one code cannot both pass.
 * Whether TOTP is on for the user; throws the 401 when it is and the code does not pass.
 */
export async function checkSecondFactor(
  deps: Deps,
  user: { id: string },
  code: string | undefined,
  context: CommandContext,
): Promise<boolean> {
  const totp = await totpOf(deps.db, user.id);
  if (!totp?.enabled || !totp.secret_sealed) return false;
  if (!code?.trim())
    throw new ApiError(401, 'totp_required', 'a TOTP code is required for this account', { totp_required: true });
  const now = deps.clock.now();
  const step = totpStep(
    openSecret(deps.sealKey, totp.secret_sealed, totpSealContext(user.id)),
    code.trim(),
    now.getTime(),
  );
  try {
    if (step !== null) {
      await deps.commands.run(
        totpStream(user.id),
        totpDecider,
        { type: 'UseCode', user_id: user.id, counter: step, at: now.toISOString() },
        context,
      );
    } else {
      await deps.commands.run(
        totpStream(user.id),
        totpDecider,
        { type: 'UseBackupCode', user_id: user.id, code_hash: hashCode(code), at: now.toISOString() },
        context,
      );
    }
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'unauthorized')
      throw new ApiError(401, 'invalid_totp_code', 'invalid or already used TOTP code');
    throw error;
  }
  return true;
}
