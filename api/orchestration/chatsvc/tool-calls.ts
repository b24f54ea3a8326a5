// The chat-service side of the outbound tools (spec 1, "Tool inputs"): the call each tool makes
// with the bot token, send_message through a per-channel webhook (created and cached on first
// send, recreated once when the chat deleted it) at the chat's pace of one message per second
// per webhook. The tool use case (./commands.ts) checks the integration, records the audit
// row and turns a 401 into the revocation.

import { ChatsvcUnreachable, type ChatsvcClient, type ChatsvcReply } from '../../../infra/chatsvc/client.ts';
import type { DeviceStore } from '../../../infra/chatsvc/device-store.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import type { ProfileRow } from '../../../projections/orchestration/profiles.ts';
import type { ChatsvcClients } from './clients.ts';
import type { ToolName, ToolResult } from './tools.ts';

/** The chat service's pace for one webhook, and how long a send waits for its turn. */
const WEBHOOK_INTERVAL_MS = 1050;
const WEBHOOK_MAX_WAIT_MS = 5000;

/** The seconds a chat 429 asks to wait (its Retry-After, 1 to 5). */
const chatRetryAfter = (reply: ChatsvcReply) =>
  Math.min(5, Math.max(1, Math.ceil(Number(reply.headers.get('retry-after')) || 1)));

/** One tool call's outcome: `refused` when the chat service answered 401 to the bot token. */
export interface ToolCallOutcome {
  result: ToolResult;
  retryAfter?: number;
  refused: boolean;
}

export class ToolCalls {
  private readonly webhookPace = new Map<string, number>();

  constructor(private readonly clients: ChatsvcClients) {}

  async call(
    profile: ProfileRow,
    row: IntegrationRow,
    name: ToolName,
    input: Record<string, unknown>,
  ): Promise<ToolCallOutcome> {
    const { store } = this.clients.requireKey();
    const client = this.clients.client(row);
    let reply: ChatsvcReply | null = null;
    let targetId: string | null = null;
    let errorMsg: string | null = null;
    let status = 502;
    try {
      if (name === 'send_message') {
        targetId = String(input.channel_id);
        const paced = await this.paceWebhook(row.integration_id, targetId);
        if (paced !== null) {
          const result: ToolResult = {
            ok: false,
            tool: name,
            target_id: targetId,
            status: 429,
            payload: null,
            error_msg: `one message per second per webhook; retry in ${paced} s`,
          };
          return { result, retryAfter: paced, refused: false };
        }
        reply = await this.sendViaWebhook(client, store, row, targetId, String(input.content), profile);
        if (reply.status === 429) {
          // Our pace reserves each send's second when the call arrives, but on a loaded machine two
          // sends can still reach the chat less than a second apart: wait out its Retry-After once.
          await new Promise((r) => setTimeout(r, chatRetryAfter(reply!) * 1000));
          reply = await this.sendViaWebhook(client, store, row, targetId, String(input.content), profile);
        }
      } else if (name === 'create_channel') {
        targetId = String(input.group_id);
        reply = await client.call('POST', `/api/groups/${targetId}/channels`, {
          name: input.name,
          kind: input.kind ?? 'text',
          description: input.description ?? '',
        });
      } else {
        targetId = String(input.community_id);
        const role = input.role && input.role !== 'member' ? input.role : null;
        reply = await client.call('POST', `/api/communities/${targetId}/invites`, {
          grants_role: role,
          ...(input.expires_at ? { expires_at: input.expires_at } : {}),
        });
      }
      status = reply.status;
    } catch (error) {
      if (!(error instanceof ChatsvcUnreachable)) throw error;
      errorMsg = error.detail;
    }
    if (reply?.status === 401) {
      return {
        result: {
          ok: false,
          tool: name,
          target_id: targetId,
          status: 401,
          payload: null,
          error_msg: 'the chat service refused the bot token',
        },
        refused: true,
      };
    }
    const ok = !!reply && reply.status >= 200 && reply.status < 300;
    if (reply && !ok)
      errorMsg =
        typeof reply.body?.error === 'string'
          ? String(reply.body.error).slice(0, 500)
          : `the chat service answered ${reply.status}`;
    const result: ToolResult = {
      ok,
      tool: name,
      target_id: targetId,
      status,
      payload: reply?.body ?? null,
      error_msg: errorMsg,
    };
    // A chat 429 mirrored as ours carries the chat's Retry-After (at least 1 s), like our own pacing's.
    return { result, refused: false, ...(reply?.status === 429 ? { retryAfter: chatRetryAfter(reply) } : {}) };
  }

  /** null when the send may go now (after waiting up to 5 s); else the seconds to wait. */
  private async paceWebhook(integrationId: string, channelId: string): Promise<number | null> {
    const key = `${integrationId}:${channelId}`;
    const now = Date.now();
    const next = this.webhookPace.get(key) ?? 0;
    const wait = Math.max(0, next - now);
    if (wait > WEBHOOK_MAX_WAIT_MS) return Math.ceil(wait / 1000);
    this.webhookPace.set(key, Math.max(now, next) + WEBHOOK_INTERVAL_MS);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    return null;
  }

  private async sendViaWebhook(
    client: ChatsvcClient,
    store: DeviceStore,
    row: IntegrationRow,
    channelId: string,
    content: string,
    profile: ProfileRow,
  ): Promise<ChatsvcReply> {
    for (let attempt = 0; attempt < 2; attempt++) {
      let hook = await store.webhook(row.integration_id, channelId);
      if (!hook) {
        const created = await client.call('POST', `/api/channels/${channelId}/webhooks`, {
          name: profile.name.slice(0, 64) || row.bot_username,
        });
        if (created.status !== 201 && created.status !== 200) return created;
        const token = created.body?.token;
        const id = created.body?.id ?? created.body?.webhook?.id;
        if (typeof token !== 'string') return created;
        await store.saveWebhook(row.integration_id, channelId, String(id), token);
        hook = { webhook_id: String(id), token };
      }
      const sent = await client.call('POST', `/api/webhooks/execute/${encodeURIComponent(hook.token)}`, { content });
      if (sent.status === 404 && attempt === 0) {
        // Deleted or deactivated on the chat side: recreate once.
        await store.dropWebhook(row.integration_id, channelId);
        continue;
      }
      return sent;
    }
    throw new Error('unreachable');
  }
}
