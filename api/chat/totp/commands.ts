// TOTP's use cases: set up, verify (enable), disable. The slice's application layer and the only
// caller of the command runner for these routes (spending a code at sign-in is still second-factor.ts's,
// called by the accounts slice's login; merging it here would close an import cycle through
// accounts/routes.ts's wrongPassword):
// each function checks what its decision needs (the set-up secret and the code, the password),
// then runs the TOTP decider.

import { hashCode, newBackupCode } from '../../../crypto/codes.ts';
import { verifyPassword } from '../../../crypto/password.ts';
import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import { newTotpSecret, totpStep } from '../../../crypto/totp.ts';
import { BACKUP_CODE_COUNT, totpDecider } from '../../../domain/chat/totp/decider.ts';
import { totpStream } from '../../../domain/chat/totp/events.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { chatUserById } from '../../../projections/chat/accounts.ts';
import { totpOf } from '../../../projections/chat/totp.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { wrongPassword } from '../accounts/routes.ts';
import type { ChatDeps } from '../deps.ts';
import { totpSealContext } from './second-factor.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'sealKey'>;

/** Starts set-up: a new secret, sealed at rest, not active until verified. Returns the secret. */
export async function setupTotp(deps: Deps, input: { user_id: string }, context: CommandContext): Promise<string> {
  const secret = newTotpSecret();
  await deps.commands.run(totpStream(input.user_id), totpDecider, {
    type: 'Setup', user_id: input.user_id, secret_sealed: sealSecret(deps.sealKey, secret, totpSealContext(input.user_id)), at: deps.clock.now().toISOString(),
  }, context);
  return secret;
}

/** Enables TOTP with a code of the set-up secret; returns the backup codes (shown once). */
export async function verifyTotp(deps: Deps, input: { user_id: string; code: string }, context: CommandContext): Promise<string[]> {
  const row = await totpOf(deps.db, input.user_id);
  if (row?.enabled) throw new ApiError(409, 'totp_already_enabled', 'TOTP is already enabled');
  if (!row?.secret_sealed) throw new ApiError(400, 'totp_not_set_up', 'call /api/totp/setup first');
  const now = deps.clock.now();
  const step = totpStep(openSecret(deps.sealKey, row.secret_sealed, totpSealContext(input.user_id)), input.code.trim(), now.getTime());
  if (step === null) throw new ApiError(401, 'invalid_totp_code', 'invalid TOTP code');
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  await deps.commands.run(totpStream(input.user_id), totpDecider, {
    type: 'Enable', user_id: input.user_id, counter: step, backup_code_hashes: codes.map(hashCode), at: now.toISOString(),
  }, context);
  return codes;
}

/** Turns TOTP off: the caller's password first (403 otherwise). */
export async function disableTotp(deps: Deps, input: { user_id: string; password: string }, context: CommandContext): Promise<void> {
  const user = await chatUserById(deps.db, input.user_id);
  if (!user?.password_hash || !(await verifyPassword(input.password, user.password_hash))) throw wrongPassword();
  await deps.commands.run(totpStream(input.user_id), totpDecider, { type: 'Disable', user_id: input.user_id, at: deps.clock.now().toISOString() }, context);
}
