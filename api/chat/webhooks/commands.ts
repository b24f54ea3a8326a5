// Webhooks' use cases: create, update, delete, and executing a webhook (posting its message).
// The slice's application layer and the only caller of the command runner for it: each function
// checks the caller manages the webhook's channel (its community's owners and admins, or an
// instance admin), runs the command, and reads the webhook back for the route's answer.

import { randomUUID } from 'node:crypto';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import { MENTIONS_MAX, messageDecider } from '../../../domain/chat/messages/decider.ts';
import { messageStream, webhookStream } from '../../../domain/chat/streams.ts';
import { checkPost } from '../../../domain/chat/messages/policy.ts';
import {
  mentionedUsernames,
  WEBHOOK_RATE,
  webhookDecider,
  type WebhookCommand,
} from '../../../domain/chat/webhooks/decider.ts';
import { DomainError } from '../../../domain/shared/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import { lastPostedAt } from '../../../projections/chat/messages.ts';
import {
  activeWebhookByHash,
  mentionableMembers,
  webhookById,
  type ExecutableWebhook,
  type WebhookRow,
} from '../../../projections/chat/webhooks.ts';
import { ApiError, rateLimited } from '../../shared/http-errors.ts';
import { channelFor, type ChannelAccess } from '../access.ts';
import type { ChatDeps } from '../deps.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock'>;

/** Who manages webhooks: the caller and whether they are an instance admin (or owner). */
export interface Manager {
  user_id: string;
  instance_admin: boolean;
}

/** The channel, if the caller manages its webhooks (403 `insufficient_role` otherwise); the list uses it too. */
export async function managedChannel(db: Pool, channelId: string, manager: Manager): Promise<ChannelAccess> {
  const access = await channelFor(db, channelId, manager.user_id);
  if (!manager.instance_admin && !(access.community_role === 'owner' || access.community_role === 'admin')) {
    throw new ApiError(403, 'insufficient_role', "webhooks are managed by the community's owners and admins");
  }
  return access;
}

/** A webhook the caller manages (404 `webhook_not_found`, then 403). */
async function managedWebhook(db: Pool, id: string, manager: Manager): Promise<WebhookRow> {
  const row = await webhookById(db, id);
  if (!row) throw new ApiError(404, 'webhook_not_found', 'no such webhook');
  await managedChannel(db, row.channel_id, manager);
  return row;
}

const run = (deps: Deps, id: string, command: WebhookCommand, context: CommandContext) =>
  deps.commands.run(webhookStream(id), webhookDecider, command, context);

/** Creates a webhook on a channel; its token is returned only here. */
export async function createWebhook(
  deps: Deps,
  input: Manager & { channel_id: string; name: string; avatar_url?: string | null },
  context: CommandContext,
): Promise<{ webhook: WebhookRow; token: string }> {
  const access = await managedChannel(deps.db, input.channel_id, input);
  const id = randomUUID();
  const token = generateToken('', 48);
  await run(
    deps,
    id,
    {
      type: 'Create',
      webhook_id: id,
      channel_id: access.channel.id,
      community_id: access.channel.community_id ?? null,
      name: input.name,
      avatar_url: input.avatar_url ?? null,
      token_hash: hashToken(token),
      by: input.user_id,
      at: deps.clock.now().toISOString(),
    },
    context,
  );
  return { webhook: (await webhookById(deps.db, id))!, token };
}

/** Renames, changes the avatar, deactivates or reactivates a webhook. */
export async function updateWebhook(
  deps: Deps,
  input: Manager & { webhook_id: string; changes: Extract<WebhookCommand, { type: 'Update' }>['changes'] },
  context: CommandContext,
): Promise<WebhookRow> {
  const row = await managedWebhook(deps.db, input.webhook_id, input);
  await run(
    deps,
    row.id,
    { type: 'Update', changes: input.changes, by: input.user_id, at: deps.clock.now().toISOString() },
    context,
  );
  return (await webhookById(deps.db, row.id))!;
}

/** Deletes a webhook. */
export async function deleteWebhook(
  deps: Deps,
  input: Manager & { webhook_id: string },
  context: CommandContext,
): Promise<void> {
  const row = await managedWebhook(deps.db, input.webhook_id, input);
  await run(deps, row.id, { type: 'Delete', by: input.user_id, at: deps.clock.now().toISOString() }, context);
}

/** The active webhook a token names (404 `webhook_not_found` otherwise). */
export async function activeWebhook(db: Pool, token: string): Promise<ExecutableWebhook> {
  const hook = await activeWebhookByHash(db, hashToken(token));
  if (!hook) throw new ApiError(404, 'webhook_not_found', 'invalid or inactive webhook token');
  return hook;
}

/** Posts a webhook's message (`context`: the webhook as a service actor): the channel's posting rules, one a second, the mentioned members, then Post. */
export async function executeWebhook(
  deps: Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'limiter'>,
  input: { hook: ExecutableWebhook; content: string; username?: string; avatar_url?: string | null },
  context: CommandContext,
): Promise<{ message_id: string; channel_id: string; at: string }> {
  const { hook } = input;
  // The channel's posting rules, as for any poster: a webhook is not a moderator, so an archived
  // or read-only channel refuses it (403), and slow mode holds it like a member (429). It is
  // not a member and cannot be timed out: the webhook belongs to the channel itself.
  const now = deps.clock.now();
  try {
    checkPost(
      {
        member: true,
        rank: 0,
        archived: hook.archived,
        read_only: hook.read_only,
        slow_mode_secs: hook.slow_mode_secs,
        timed_out_until: null,
        last_posted_at: hook.slow_mode_secs > 0 ? await lastPostedAt(deps.db, hook.channel_id, hook.id) : null,
      },
      now,
    );
  } catch (error) {
    if (error instanceof DomainError && error.code === 'slow_mode')
      throw rateLimited(Number(error.details.retry_after_ms) / 1000, error.message);
    throw error;
  }
  const decision = await deps.limiter.consume(`chat:webhook:${hook.id}`, WEBHOOK_RATE);
  if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, 'one message per second per webhook');
  const names = mentionedUsernames(input.content);
  const members = await mentionableMembers(deps.db, hook.channel_id, names);
  const mentions = names.map((n) => members.find((m) => m.username === n)?.id).filter((id): id is string => !!id);
  const id = randomUUID();
  const at = now.toISOString();
  await deps.commands.run(
    messageStream(id),
    messageDecider,
    {
      type: 'Post',
      message_id: id,
      channel_id: hook.channel_id,
      sender_id: hook.id,
      ciphertext: input.content,
      kind: 'text',
      thread_root_id: null,
      mentions: [...new Set(mentions)].slice(0, MENTIONS_MAX),
      via_webhook: true,
      has_file: false,
      webhook: {
        webhook_id: hook.id,
        username: input.username ?? hook.name,
        avatar_url: input.avatar_url ?? hook.avatar_url,
      },
      at,
    },
    context,
  );
  return { message_id: id, channel_id: hook.channel_id, at };
}
