// Bot use cases shared by the bot administration, integration and bootstrap routes: create a
// bot account (its username reserved like any account's), find or create an integration bot,
// mint a token (plaintext returned once, only its SHA-256 and prefix recorded), join a bot to a
// community and its public channels.

import { randomBytes, randomUUID } from 'node:crypto';
import { hashToken } from '../../../crypto/tokens.ts';
import { accountDecider } from '../../../domain/chat/accounts/decider.ts';
import { chatUserStream } from '../../../domain/chat/accounts/events.ts';
import { BOT_TOKEN_PREFIX_LENGTH, botTokenDecider, integrationUsername } from '../../../domain/chat/bots/decider.ts';
import { botTokenStream, type BotScope } from '../../../domain/chat/bots/events.ts';
import { channelDecider } from '../../../domain/chat/channels/decider.ts';
import { channelStream } from '../../../domain/chat/channels/events.ts';
import { communityDecider } from '../../../domain/chat/communities/decider.ts';
import { communityStream } from '../../../domain/chat/communities/events.ts';
import { groupDecider } from '../../../domain/chat/groups/decider.ts';
import { groupStream } from '../../../domain/chat/groups/events.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { botById, botByUsername, publicSpacesOf, type BotRow } from '../../../projections/chat/bots.ts';
import { chatUserByUsername } from '../../../projections/chat/accounts.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { reserveOrResume } from '../../shared/reservations.ts';
import type { ChatDeps } from '../deps.ts';

const iso = (deps: Pick<ChatDeps, 'clock'>) => deps.clock.now().toISOString();

/** `cb_` + 64 lowercase hex characters (256 random bits). */
export const newBotToken = () => `cb_${randomBytes(32).toString('hex')}`;

export async function createBot(
  deps: ChatDeps,
  input: { username: string; display_name: string; created_by: string | null; integration: string | null },
  context: CommandContext,
): Promise<BotRow> {
  if (await chatUserByUsername(deps.db, input.username)) throw new ApiError(409, 'username_taken', 'username is already taken');
  try {
    // A bot whose creation failed after its reservation is completed under its id (api/shared/reservations.ts).
    const id = await reserveOrResume(deps.commands, { kind: 'chat_username', key: input.username.toLowerCase(), ownerId: randomUUID(), ownerStream: chatUserStream }, context);
    await deps.commands.run(chatUserStream(id), accountDecider, { type: 'RegisterBot', user_id: id, ...input, at: iso(deps) }, context);
    return (await botById(deps.db, id))!;
  } catch (error) {
    // Taken, or created first by another attempt at this username.
    if (error instanceof DomainError && error.kind === 'conflict') throw new ApiError(409, 'username_taken', 'username is already taken');
    throw error;
  }
}

/** The integration bot for `label` (`integration-<sanitized label>`), created when missing; a creation race resolves to the winner's bot. */
export async function integrationBot(deps: ChatDeps, label: string, createdBy: string | null, context: CommandContext): Promise<BotRow> {
  const username = integrationUsername(label);
  const existing = await botByUsername(deps.db, username);
  if (existing) return existing;
  try {
    return await createBot(deps, { username, display_name: label.trim().slice(0, 64) || username, created_by: createdBy, integration: label.trim().slice(0, 64) }, context);
  } catch (error) {
    const raced = await botByUsername(deps.db, username);
    if (raced) return raced;
    if (error instanceof ApiError && error.status === 409) throw new ApiError(409, 'username_taken', `${username} is taken by an account that is not a bot`);
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
  const expires_at = input.expires_in_hours ? new Date(now.getTime() + input.expires_in_hours * 3_600_000).toISOString() : null;
  const prefix = token.slice(0, BOT_TOKEN_PREFIX_LENGTH);
  await deps.commands.run(botTokenStream(id), botTokenDecider, {
    type: 'Mint', token_id: id, bot_id: botId, token_hash: hashToken(token), prefix, scope: input.scope, label: input.label, expires_at,
    rate_limit_per_window: input.rate_limit_per_window, created_by: input.created_by, at: now.toISOString(),
  }, context);
  return {
    id, bot_id: botId, token, prefix, scope: input.scope, label: input.label, expires_at, rate_limit_per_window: input.rate_limit_per_window, created_at: now.toISOString(),
  };
}

/** Join the bot to a community with `role`, then to its public groups and their channels. Returns the channels joined. */
export async function joinCommunity(deps: ChatDeps, botId: string, communityId: string, role: 'member' | 'moderator' | 'admin', actorId: string, context: CommandContext): Promise<string[]> {
  await deps.commands.run(communityStream(communityId), communityDecider, { type: 'AdminAddMember', user_id: botId, role, actor_id: actorId, at: iso(deps) }, context);
  const spaces = await publicSpacesOf(deps.db, communityId);
  for (const groupId of spaces.groups) {
    await deps.commands.run(groupStream(groupId), groupDecider, { type: 'Join', actor_id: botId, community_role: role, at: iso(deps) }, context);
  }
  const joined: string[] = [];
  for (const channelId of spaces.channels) {
    try {
      await deps.commands.run(channelStream(channelId), channelDecider, { type: 'Join', actor_id: botId, community_role: role, eligible: true, at: iso(deps) }, context);
      joined.push(channelId);
    } catch (error) {
      // A channel ban stays: the bot simply is not joined there.
      if (!(error instanceof DomainError && error.kind === 'forbidden')) throw error;
    }
  }
  return joined;
}
