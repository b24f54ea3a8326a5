// The second factor at login: with TOTP on, `totp_code` must be the code of the current time
// step (±1) not used before, or one of the account's unused backup codes (each works once).
// Both are decided by the account's TOTP stream, so two logins racing with one code cannot both
// pass.

import { hashCode } from '../../../crypto/codes.ts';
import { openSecret } from '../../../crypto/seal.ts';
import { totpStep } from '../../../crypto/totp.ts';
import { totpDecider } from '../../../domain/chat/totp/decider.ts';
import { totpStream } from '../../../domain/chat/totp/events.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { totpOf } from '../../../projections/chat/totp.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { ChatDeps } from '../deps.ts';

export const totpSealContext = (userId: string) => `chat_totp:${userId}`;

/** Whether TOTP is on for the user; throws the 401 when it is and the code does not pass. */
export async function checkSecondFactor(
  deps: Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'sealKey'>,
  user: { id: string },
  code: string | undefined,
  context: CommandContext,
): Promise<boolean> {
  const totp = await totpOf(deps.db, user.id);
  if (!totp?.enabled || !totp.secret_sealed) return false;
  if (!code?.trim()) throw new ApiError(401, 'totp_required', 'a TOTP code is required for this account', { totp_required: true });
  const now = deps.clock.now();
  const step = totpStep(openSecret(deps.sealKey, totp.secret_sealed, totpSealContext(user.id)), code.trim(), now.getTime());
  try {
    if (step !== null) {
      await deps.commands.run(totpStream(user.id), totpDecider, { type: 'UseCode', user_id: user.id, counter: step, at: now.toISOString() }, context);
    } else {
      await deps.commands.run(totpStream(user.id), totpDecider, { type: 'UseBackupCode', user_id: user.id, code_hash: hashCode(code), at: now.toISOString() }, context);
    }
  } catch (error) {
    if (error instanceof DomainError && error.kind === 'unauthorized') throw new ApiError(401, 'invalid_totp_code', 'invalid or already used TOTP code');
    throw error;
  }
  return true;
}
