// Bots' use cases: the slice's application layer and the only caller of the command runner for
// the bot administration, integration, bootstrap and key registration routes. Create a bot
// account (its username reserved like any account's, with the bot in one log transaction where
// the store allows), find or create an integration bot, mint a token (plaintext returned once,
// only its SHA-256 and prefix recorded) or revoke one, join a bot to a community and its public
// channels or remove it, delete a bot, register a bot's first keys.

import type { z } from '@hono/zod-openapi';
import { randomBytes, randomUUID } from 'node:crypto';
import { hashToken } from '../../../crypto/tokens.ts';
import { accountDecider } from '../../../domain/chat/accounts/decider.ts';
import {
  CHAT_RESERVATIONS,
  chatUserStream,
  botTokenStream,
  channelStream,
  communityStream,
  groupStream,
  keysStream,
} from '../../../domain/chat/streams.ts';
import { BOT_TOKEN_PREFIX_LENGTH, botTokenDecider, integrationUsername } from '../../../domain/chat/bots/decider.ts';
import type { BotScope } from '../../../domain/chat/bots/events.ts';
import { channelDecider } from '../../../domain/chat/channels/decider.ts';
import { communityDecider } from '../../../domain/chat/communities/decider.ts';
import { groupDecider } from '../../../domain/chat/groups/decider.ts';
import { keysDecider } from '../../../domain/chat/keys/decider.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import { reservationDecider, reservationStream } from '../../../domain/shared/reservation.ts';
import { part, type CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import {
  botById,
  botByUsername,
  communitiesOfUser,
  publicSpacesOf,
  tokensOfBots,
  type BotRow,
  type BotTokenRow,
} from '../../../projections/chat/bots.ts';
import { chatUserByUsername } from '../../../projections/chat/accounts.ts';
import { communityAccess } from '../../../projections/chat/communities.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { reserveOrResume, takenError } from '../../shared/reservations.ts';
import { checkKeys, prekeysOf } from '../accounts/accounts.ts';
import type { OneTimePrekeyBody, SignedPrekeyBody } from '../accounts/schemas.ts';
import { notFound } from '../access.ts';
import { isUuid } from '../../shared/params.ts';
import { leaveCommunitySpaces } from '../communities/commands.ts';
import type { ChatDeps } from '../deps.ts';
import { toBase64 } from '../keys/bytes.ts';
import { revokeSessionsOf } from '../sessions/sessions.ts';

const iso = (deps: Pick<ChatDeps, 'clock'>) => deps.clock.now().toISOString();

/** `cb_` + 64 lowercase hex characters (256 random bits). */
export const newBotToken = () => `cb_${randomBytes(32).toString('hex')}`;

const USERNAME = 'chat_username';

/**
 * Creates a bot account, its username reserved like any account's (409 `username_taken` when it
 * is someone's).
 *
 * Where the store appends several streams in one transaction (PostgreSQL), the reservation and
 * the bot are appended together: both or neither, so a crash cannot leave the username reserved
 * for a bot that never existed. A username already reserved goes the second way below, which
 * answers 409 for a live account and takes over a reservation orphaned before (by the second
 * way, or by logs written before the first).
 *
 * Where it cannot (EventStoreDB), and for a reserved username: reserve, then create, two appends.
 * A bot whose creation failed after its reservation is completed under the reservation's id
 * (api/shared/reservations.ts), so retrying a failed creation completes it.
 */
export async function createBot(
  deps: ChatDeps,
  input: { username: string; display_name: string; created_by: string | null; integration: string | null },
  context: CommandContext,
): Promise<BotRow> {
  if (await chatUserByUsername(deps.db, input.username))
    throw new ApiError(409, 'username_taken', 'username is already taken');
  const key = input.username.toLowerCase();
  const register = (id: string) => ({ type: 'RegisterBot' as const, user_id: id, ...input, at: iso(deps) });
  try {
    if (deps.commands.canRunTogether) {
      const id = randomUUID();
      try {
        await deps.commands.runTogether(
          [
            part(reservationStream(CHAT_RESERVATIONS[USERNAME], key), reservationDecider, {
              type: 'Reserve',
              kind: USERNAME,
              owner_id: id,
            }),
            part(chatUserStream(id), accountDecider, register(id)),
          ],
          context,
        );
        return (await botById(deps.db, id))!;
      } catch (error) {
        // Reserved already: by a live account (409 below), or by a creation that never made its bot (resumed below).
        if (!(error instanceof DomainError && error.code === takenError(USERNAME).code)) throw error;
      }
    }
    const id = await reserveOrResume(
      deps.commands,
      {
        kind: USERNAME,
        category: CHAT_RESERVATIONS[USERNAME],
        key,
        ownerId: randomUUID(),
        ownerStream: chatUserStream,
      },
      context,
    );
    await deps.commands.run(chatUserStream(id), accountDecider, register(id), context);
    return (await botById(deps.db, id))!;
  } catch (error) {
    // Taken, or created first by another attempt at this username.
    if (error instanceof DomainError && error.kind === 'conflict')
      throw new ApiError(409, 'username_taken', 'username is already taken');
    throw error;
  }
}

/** The integration bot for `label` (`integration-<sanitized label>`), created when missing; a creation race resolves to the winner's bot. */
export async function integrationBot(
  deps: ChatDeps,
  label: string,
  createdBy: string | null,
  context: CommandContext,
): Promise<BotRow> {
  const username = integrationUsername(label);
  const existing = await botByUsername(deps.db, username);
  if (existing) return existing;
  try {
    return await createBot(
      deps,
      {
        username,
        display_name: label.trim().slice(0, 64) || username,
        created_by: createdBy,
        integration: label.trim().slice(0, 64),
      },
      context,
    );
  } catch (error) {
    const raced = await botByUsername(deps.db, username);
    if (raced) return raced;
    if (error instanceof ApiError && error.status === 409)
      throw new ApiError(409, 'username_taken', `${username} is taken by an account that is not a bot`);
    throw error;
  }
}

export interface MintInput {
  scope: BotScope;
  label: string | null;
  expires_in_hours: number | null;
  rate_limit_per_window: number | null;
  created_by: string | null;
}

export async function mintToken(deps: ChatDeps, botId: string, input: MintInput, context: CommandContext) {
  const id = randomUUID();
  const token = newBotToken();
  const now = deps.clock.now();
  const expires_at = input.expires_in_hours
    ? new Date(now.getTime() + input.expires_in_hours * 3_600_000).toISOString()
    : null;
  const prefix = token.slice(0, BOT_TOKEN_PREFIX_LENGTH);
  await deps.commands.run(
    botTokenStream(id),
    botTokenDecider,
    {
      type: 'Mint',
      token_id: id,
      bot_id: botId,
      token_hash: hashToken(token),
      prefix,
      scope: input.scope,
      label: input.label,
      expires_at,
      rate_limit_per_window: input.rate_limit_per_window,
      created_by: input.created_by,
      at: now.toISOString(),
    },
    context,
  );
  return {
    id,
    bot_id: botId,
    token,
    prefix,
    scope: input.scope,
    label: input.label,
    expires_at,
    rate_limit_per_window: input.rate_limit_per_window,
    created_at: now.toISOString(),
  };
}

/** Join the bot to a community with `role`, then to its public groups and their channels. Returns the channels joined. */
export async function joinCommunity(
  deps: ChatDeps,
  botId: string,
  communityId: string,
  role: 'member' | 'moderator' | 'admin',
  actorId: string,
  context: CommandContext,
): Promise<string[]> {
  await deps.commands.run(
    communityStream(communityId),
    communityDecider,
    { type: 'AdminAddMember', user_id: botId, role, actor_id: actorId, at: iso(deps) },
    context,
  );
  const spaces = await publicSpacesOf(deps.db, communityId);
  for (const groupId of spaces.groups) {
    await deps.commands.run(
      groupStream(groupId),
      groupDecider,
      { type: 'Join', actor_id: botId, community_role: role, at: iso(deps) },
      context,
    );
  }
  const joined: string[] = [];
  for (const channelId of spaces.channels) {
    try {
      await deps.commands.run(
        channelStream(channelId),
        channelDecider,
        { type: 'Join', actor_id: botId, community_role: role, eligible: true, at: iso(deps) },
        context,
      );
      joined.push(channelId);
    } catch (error) {
      // A channel ban stays: the bot simply is not joined there.
      if (!(error instanceof DomainError && error.kind === 'forbidden')) throw error;
    }
  }
  return joined;
}

/** A bot by id (404 `bot_not_found` otherwise); the reads use it too. */
export async function botOf(db: Pool, id: string): Promise<BotRow> {
  const row = await botById(db, id);
  if (!row) throw new ApiError(404, 'bot_not_found', 'no such bot');
  return row;
}

/** The bootstrap: the integration bot for `label` and a new bot:provision token for it (the deploy secret was checked by the route). */
export async function bootstrapToken(
  deps: ChatDeps,
  input: { label: string; expires_in_hours: number | null },
  context: CommandContext,
) {
  const row = await integrationBot(deps, input.label, null, context);
  const minted = await mintToken(
    deps,
    row.id,
    {
      scope: 'bot:provision',
      label: 'bootstrap',
      expires_in_hours: input.expires_in_hours,
      rate_limit_per_window: null,
      created_by: null,
    },
    context,
  );
  return { row, minted };
}

/** Deletes a bot: its account, its keys, its sessions. */
export async function deleteBot(deps: ChatDeps, input: { bot_id: string }, context: CommandContext): Promise<void> {
  const row = await botOf(deps.db, input.bot_id);
  await deps.commands.run(chatUserStream(row.id), accountDecider, { type: 'Delete', at: iso(deps) }, context);
  await deps.commands.run(keysStream(row.id), keysDecider, { type: 'RemoveKeys', at: iso(deps) }, context);
  await revokeSessionsOf(deps, row.id, 'account_deleted', context);
}

export interface MintBotToken {
  bot_id: string;
  user_id: string;
  /** The caller is a bot (a bot:provision token): it mints `default` tokens only. */
  bot_caller: boolean;
  scope: BotScope;
  label: string | null;
  expires_in_hours: number | null;
  rate_limit_per_window: number | null;
}

/** Mints a token for a bot (a bot:provision caller: `default` scope only, 403 otherwise). */
export async function mintBotToken(deps: ChatDeps, input: MintBotToken, context: CommandContext) {
  const row = await botOf(deps.db, input.bot_id);
  if (input.bot_caller && input.scope !== 'default')
    throw new ApiError(403, 'insufficient_scope', 'a bot:provision token mints default-scope tokens only');
  return mintToken(
    deps,
    row.id,
    {
      scope: input.scope,
      label: input.label,
      expires_in_hours: input.expires_in_hours,
      rate_limit_per_window: input.rate_limit_per_window,
      created_by: input.user_id,
    },
    context,
  );
}

/** Revokes a bot's token (404 `bot_not_found`, `token_not_found`); returns the token as the read model has it. */
export async function revokeBotToken(
  deps: ChatDeps,
  input: { bot_id: string; token_id: string; user_id: string },
  context: CommandContext,
): Promise<BotTokenRow> {
  const row = await botOf(deps.db, input.bot_id);
  const tid = input.token_id;
  if (!isUuid(tid)) throw new ApiError(404, 'token_not_found', 'no such token for this bot');
  await deps.commands.run(
    botTokenStream(tid),
    botTokenDecider,
    { type: 'Revoke', bot_id: row.id, by: input.user_id, at: iso(deps) },
    context,
  );
  return (await tokensOfBots(deps.db, [row.id])).find((t) => t.id === tid)!;
}

/** Joins a bot to a community (a bot:provision caller: as `member` only, 403 otherwise) and its public spaces; returns the membership and the channels joined. */
export async function joinBotToCommunity(
  deps: ChatDeps,
  input: {
    bot_id: string;
    community_id: string;
    role: 'member' | 'moderator' | 'admin';
    user_id: string;
    bot_caller: boolean;
  },
  context: CommandContext,
) {
  const row = await botOf(deps.db, input.bot_id);
  if (input.bot_caller && input.role !== 'member')
    throw new ApiError(403, 'insufficient_scope', 'a bot:provision token joins bots as member only');
  if (!(await communityAccess(deps.db, input.community_id, row.id))) throw notFound('community');
  const joined = await joinCommunity(deps, row.id, input.community_id, input.role, input.user_id, context);
  const membership = (await communitiesOfUser(deps.db, row.id)).find((m) => m.id === input.community_id)!;
  return { membership, joined };
}

/** Removes a bot from a community, and from its groups and channels (404 when the bot is not a member). */
export async function removeBotFromCommunity(
  deps: ChatDeps,
  input: { bot_id: string; community_id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  const row = await botOf(deps.db, input.bot_id);
  const cid = input.community_id;
  if (!isUuid(cid) || !(await communityAccess(deps.db, cid, row.id))) throw notFound('community');
  await deps.commands.run(
    communityStream(cid),
    communityDecider,
    { type: 'AdminRemoveMember', user_id: row.id, actor_id: input.user_id, at: iso(deps) },
    context,
  );
  await leaveCommunitySpaces(deps, cid, row.id, input.user_id, context);
}

/** An integration: its bot (`integration-<label>`, found or created) and a scoped token. */
export async function createIntegration(
  deps: ChatDeps,
  input: {
    label: string;
    scope: BotScope;
    expires_in_hours: number | null;
    rate_limit_per_window: number | null;
    user_id: string;
  },
  context: CommandContext,
) {
  const row = await integrationBot(deps, input.label, input.user_id, context);
  const minted = await mintToken(
    deps,
    row.id,
    {
      scope: input.scope,
      label: input.label,
      expires_in_hours: input.expires_in_hours,
      rate_limit_per_window: input.rate_limit_per_window,
      created_by: input.user_id,
    },
    context,
  );
  return { row, minted };
}

export interface RegisterKeys {
  user_id: string;
  identity_key: number[];
  signed_prekey: z.infer<typeof SignedPrekeyBody>;
  one_time_prekeys: z.infer<typeof OneTimePrekeyBody>[];
}

/** Registers the caller's first keys (a bot, which has none until then). */
export async function registerKeys(deps: ChatDeps, input: RegisterKeys, context: CommandContext): Promise<void> {
  checkKeys(input);
  await deps.commands.run(
    keysStream(input.user_id),
    keysDecider,
    {
      type: 'RegisterKeys',
      user_id: input.user_id,
      identity_key: toBase64(input.identity_key),
      signed_prekey: {
        key_id: input.signed_prekey.key_id,
        public_key: toBase64(input.signed_prekey.public_key),
        signature: toBase64(input.signed_prekey.signature),
      },
      one_time_prekeys: prekeysOf(input.one_time_prekeys),
      at: deps.clock.now().toISOString(),
    },
    context,
  );
}
