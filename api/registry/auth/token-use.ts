// `last_used_at` of a machine token, coalesced: a use is recorded as an event at most once a
// minute per token and process (on its own `registry.token_use-<id>` stream, which no decision
// reads), so the log does not grow by an event per request. The request that records it waits
// for it (read-your-writes), the others in that minute do not.

import { tokenUseStream } from '../../../domain/registry/streams.ts';
import type { RegistryDeps } from '../deps.ts';

export const TOKEN_USE_COALESCE_MS = 60_000;
const lastNoted = new WeakMap<object, Map<string, number>>();

export async function noteTokenUse(
  deps: Pick<RegistryDeps, 'commands' | 'log'>,
  tokenId: string,
  now: Date,
  requestId: string,
): Promise<void> {
  let noted = lastNoted.get(deps.commands);
  if (!noted) lastNoted.set(deps.commands, (noted = new Map()));
  const last = noted.get(tokenId);
  if (last !== undefined && now.getTime() - last < TOKEN_USE_COALESCE_MS && now.getTime() >= last) return;
  noted.set(tokenId, now.getTime());
  if (noted.size > 10_000) noted.clear();
  try {
    await deps.commands.record(
      tokenUseStream(tokenId),
      { type: 'RegistryTokenUsed', data: { token_id: tokenId, at: now.toISOString() } },
      { actor: { kind: 'service', id: `token:${tokenId}` }, correlationId: requestId },
    );
  } catch (error) {
    deps.log.warn('registry_token_use_not_recorded', { token_id: tokenId, error: (error as Error).message });
  }
}
