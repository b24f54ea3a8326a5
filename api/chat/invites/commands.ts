// Registration invites' use cases (admin): mint and revoke. The slice's application layer and
// the only caller of the command runner for these routes (redeeming an invite is registration's,
// in the accounts slice): each function runs the invite decider and reads the invite back.

import { randomUUID } from 'node:crypto';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import { inviteDecider } from '../../../domain/chat/invites/decider.ts';
import { inviteStream } from '../../../domain/chat/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { inviteById, type InviteRow } from '../../../projections/chat/invites.ts';
import { notFound } from '../access.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

/** Mints a single-use invite; its code is returned only here. */
export async function createInvite(
  deps: Deps,
  input: { user_id: string; expires_in_hours?: number },
  context: CommandContext,
): Promise<{ invite: InviteRow; code: string }> {
  const id = randomUUID();
  const code = generateToken('inv_', 18);
  const hours = input.expires_in_hours;
  const now = deps.clock.now();
  await deps.commands.run(
    inviteStream(id),
    inviteDecider,
    {
      type: 'Create',
      invite_id: id,
      code_hash: hashToken(code),
      created_by: input.user_id,
      expires_at: hours ? new Date(now.getTime() + hours * 3_600_000).toISOString() : null,
      at: now.toISOString(),
    },
    context,
  );
  return { invite: (await inviteById(deps.db, id))!, code };
}

/** Revokes an invite (404 `invite_not_found` otherwise). */
export async function revokeInvite(
  deps: Deps,
  input: { invite_id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  const invite = await inviteById(deps.db, input.invite_id);
  if (!invite) throw notFound('invite');
  await deps.commands.run(
    inviteStream(invite.id),
    inviteDecider,
    { type: 'Revoke', by: input.user_id, at: deps.clock.now().toISOString() },
    context,
  );
}
