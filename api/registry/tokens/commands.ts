// Machine-token commands (the slice's application layer, the only caller of the command runner
// for tokens): create one (its plaintext returned once, only its hash logged), revoke one; and
// the lookup they need.

import { randomUUID } from 'node:crypto';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import type { Scope } from '../../../domain/registry/catalog.ts';
import { TOKEN_DAYS, TOKEN_PREFIX, tokenDecider } from '../../../domain/registry/tokens/decider.ts';
import { tokenStream } from '../../../domain/registry/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { tokenById, type TokenRow } from '../../../projections/registry/tokens.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { isUuid } from '../../shared/params.ts';
import type { RegistryDeps } from '../deps.ts';

type Deps = Pick<RegistryDeps, 'commands' | 'db' | 'clock'>;
/** Characters of the token shown in lists to tell tokens apart (the prefix and 6 random characters). */
const DISPLAY_CHARS = TOKEN_PREFIX.length + 6;

/** A token by id, or 404 `token_not_found` (an id that is no UUID names none). */
export async function existingToken(deps: Pick<RegistryDeps, 'db'>, id: string): Promise<TokenRow> {
  const row = isUuid(id) ? await tokenById(deps.db, id) : null;
  if (!row) throw new ApiError(404, 'token_not_found', 'no such token');
  return row;
}

/** Mint a token; its row and its plaintext, which nothing keeps (the log holds its hash). */
export async function createToken(
  deps: Deps,
  input: { name: string; scopes: Scope[]; expires_in_days?: number },
  context: CommandContext,
): Promise<{ row: TokenRow; token: string }> {
  const id = randomUUID();
  const token = generateToken(TOKEN_PREFIX);
  await deps.commands.run(
    tokenStream(id),
    tokenDecider,
    {
      type: 'CreateToken',
      token_id: id,
      name: input.name,
      token_hash: hashToken(token),
      token_prefix: token.slice(0, DISPLAY_CHARS),
      scopes: input.scopes,
      days: input.expires_in_days ?? TOKEN_DAYS.default,
      by: context.actor.id,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return { row: (await tokenById(deps.db, id))!, token };
}

/** Revoke a token (again: nothing changes). */
export async function revokeToken(deps: Deps, id: string, context: CommandContext): Promise<void> {
  const row = await existingToken(deps, id);
  await deps.commands.run(
    tokenStream(row.id),
    tokenDecider,
    { type: 'RevokeToken', by: context.actor.id, at: deps.clock.now().toISOString() },
    context,
  );
}
