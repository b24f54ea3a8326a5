// Session commands (the slice's application layer, the only caller of the command runner for
// interactive sessions): start one after a verified OIDC sign-in, end one on logout. The
// session's id never reaches the log, only its hash.

import { randomId, hashToken } from '../../../crypto/tokens.ts';
import { registrySessionDecider } from '../../../domain/registry/sessions/decider.ts';
import { registrySessionStream } from '../../../domain/registry/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { RegistryDeps } from '../deps.ts';

type Deps = Pick<RegistryDeps, 'commands' | 'clock'>;

/** Start a session for a signed-in user; its id (the cookie's value) and hash. */
export async function startSession(
  deps: Deps,
  user: { subject: string; name: string; email: string | null; role: 'admin' | 'readonly' },
  context: CommandContext,
): Promise<{ sessionId: string; sessionHash: string }> {
  const sessionId = randomId(32);
  const sessionHash = hashToken(sessionId);
  await deps.commands.run(
    registrySessionStream(sessionHash),
    registrySessionDecider,
    {
      type: 'StartSession',
      session_hash: sessionHash,
      ...user,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return { sessionId, sessionHash };
}

/** End the session with this hash. */
export async function endSession(deps: Deps, sessionHash: string, context: CommandContext): Promise<void> {
  await deps.commands.run(
    registrySessionStream(sessionHash),
    registrySessionDecider,
    { type: 'EndSession', at: deps.clock.now().toISOString() },
    context,
  );
}
