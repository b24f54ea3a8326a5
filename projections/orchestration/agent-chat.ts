// The agent-chat read models, fed by the conversation events: `agent_chat_conversations` (one row per
// conversation, with its owner and expiry), `agent_chat_messages` (two rows per completed turn: the
// user's message and the reply, ordered by the turn's revision in its stream) and
// `agent_chat_usage_daily` (requests, tokens and cost per profile and UTC day). One projection writes
// all three, so a turn is applied in one statement and read-your-writes waits on one checkpoint.

import type { ConversationState } from '../../domain/orchestration/agent-chat/decider.ts';
import {
  CONVERSATION_EVENT_TYPES,
  type ConversationEvent,
  type ConversationKind,
  type TurnTokens,
} from '../../domain/orchestration/agent-chat/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const agentChatProjection = defineProjection<ConversationEvent>({
  name: 'agent_chat',
  handles: CONVERSATION_EVENT_TYPES,
  tables: ['agent_chat_conversations', 'agent_chat_messages', 'agent_chat_usage_daily'],
  async apply(event, tx) {
    const d = event.data;
    if (event.type === 'ConversationStarted') {
      const s = event.data;
      await tx.query(
        `INSERT INTO agent_chat_conversations (id, profile_id, profile_slug, kind, owner_kind, owner_id, visitor_id, follows, started_at, last_message_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $9)`,
        [
          s.conversation_id,
          s.profile_id,
          s.profile_slug,
          s.kind,
          s.owner_kind,
          s.owner_id,
          s.visitor_id,
          s.follows,
          s.at,
        ],
      );
      return;
    }
    const t = event.data;
    const seq = event.revision * 2n;
    await tx.query(
      `WITH messages AS (
         INSERT INTO agent_chat_messages (id, conversation_id, seq, role, content, tokens, cost_cents, model, created_at)
         VALUES ($1, $3, $4, 'user', $5, NULL, 0, NULL, $11), ($2, $3, $4 + 1, 'assistant', $6, $7, $8, $9, $11)
       ),
       conversation AS (
         UPDATE agent_chat_conversations SET message_count = message_count + 2, last_message_at = $11, expires_at = $12 WHERE id = $3
       )
       INSERT INTO agent_chat_usage_daily AS u (profile_id, day, requests, input_tokens, output_tokens, cache_read_tokens, cost_cents)
       VALUES ($10, ($11::timestamptz AT TIME ZONE 'UTC')::date, 1, $13, $14, $15, $8)
       ON CONFLICT (profile_id, day) DO UPDATE SET requests = u.requests + 1, input_tokens = u.input_tokens + $13,
         output_tokens = u.output_tokens + $14, cache_read_tokens = u.cache_read_tokens + $15, cost_cents = u.cost_cents + $8`,
      [
        t.user_message_id,
        t.reply_message_id,
        t.conversation_id,
        seq.toString(),
        t.user_message,
        t.reply,
        JSON.stringify(t.tokens),
        t.cost_cents,
        t.model,
        d.profile_id,
        t.at,
        t.expires_at,
        t.tokens.input,
        t.tokens.output,
        t.tokens.cache_read,
      ],
    );
  },
});

// --- queries ---------------------------------------------------------------------------------

export interface ConversationRow {
  id: string;
  profile_id: string;
  profile_slug: string;
  kind: ConversationKind;
  owner_kind: 'visitor' | 'account';
  owner_id: string;
  visitor_id: string | null;
  message_count: number;
  started_at: Date;
  last_message_at: Date;
  expires_at: Date;
}

const CONVERSATION =
  'id, profile_id, profile_slug, kind, owner_kind, owner_id, visitor_id, message_count, started_at, last_message_at, expires_at';

export async function conversationById(pool: Pool, id: string): Promise<ConversationRow | null> {
  const { rows } = await pool.query<ConversationRow>({
    name: 'orchard_chat_conversation',
    text: `SELECT ${CONVERSATION} FROM agent_chat_conversations WHERE id = $1`,
    values: [id],
  });
  return rows[0] ?? null;
}

/**
 * The conversation decider's state and the stream revision this row reflects: a turn continuing
 * the conversation decides on it without reading the stream (the append's expected revision
 * checks it is current). The stream is `ConversationStarted` (revision 0), then one
 * `ChatTurnCompleted` per turn, each adding two messages, applied with the row in one statement.
 */
export function conversationState(row: ConversationRow): { state: ConversationState; revision: bigint } {
  const turns = row.message_count / 2;
  return {
    state: {
      started: true,
      profile_id: row.profile_id,
      owner: { kind: row.owner_kind, id: row.owner_id },
      expires_at: turns > 0 ? new Date(row.expires_at).toISOString() : null,
    },
    revision: BigInt(turns),
  };
}

export type ContextMessage = Pick<MessageRow, 'role' | 'content'>;

/**
 * A conversation with its last `limit` messages, oldest first (a turn's context), in one round
 * trip; null when there is no such conversation.
 */
export async function conversationWithContext(
  pool: Pool,
  id: string,
  limit: number,
): Promise<(ConversationRow & { context: ContextMessage[] }) | null> {
  const { rows } = await pool.query<ConversationRow & { context: ContextMessage[] }>({
    name: 'orchard_chat_conversation_context',
    text: `SELECT ${CONVERSATION.split(', ')
      .map((c) => `c.${c}`)
      .join(', ')}, coalesce(m.context, '[]'::json) AS context
           FROM agent_chat_conversations c
           LEFT JOIN LATERAL (
             SELECT json_agg(json_build_object('role', last.role, 'content', last.content) ORDER BY last.seq) AS context
             FROM (SELECT role, content, seq FROM agent_chat_messages WHERE conversation_id = c.id ORDER BY seq DESC LIMIT $2) last
           ) m ON true
           WHERE c.id = $1`,
    values: [id, limit],
  });
  return rows[0] ?? null;
}

/** Newest first (by last message); the admin's view across profiles and callers. */
export async function recentConversations(pool: Pool, limit: number): Promise<ConversationRow[]> {
  return (
    await pool.query<ConversationRow>(
      `SELECT ${CONVERSATION} FROM agent_chat_conversations ORDER BY last_message_at DESC, id DESC LIMIT $1`,
      [limit],
    )
  ).rows;
}

/** One owner's conversations of one kind, newest first (the personal assistant's list). */
export async function conversationsOf(
  pool: Pool,
  ownerId: string,
  kind: ConversationKind,
  limit: number,
): Promise<ConversationRow[]> {
  return (
    await pool.query<ConversationRow>(
      `SELECT ${CONVERSATION} FROM agent_chat_conversations WHERE owner_id = $1 AND kind = $2 ORDER BY last_message_at DESC, id DESC LIMIT $3`,
      [ownerId, kind, limit],
    )
  ).rows;
}

export interface MessageRow {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  tokens: TurnTokens | null;
  cost_cents: number;
  model: string | null;
  created_at: Date;
}

/** Every message of a conversation, oldest first. */
export async function messagesOf(pool: Pool, conversationId: string): Promise<MessageRow[]> {
  return (
    await pool.query<MessageRow>(
      'SELECT id, role, content, tokens, cost_cents, model, created_at FROM agent_chat_messages WHERE conversation_id = $1 ORDER BY seq',
      [conversationId],
    )
  ).rows;
}

/** A profile's spend on a UTC day, in cents (0 when it made no call). */
export async function costOnDay(pool: Pool, profileId: string, day: string): Promise<number> {
  const { rows } = await pool.query<{ cost: number }>({
    name: 'orchard_chat_cost_today',
    text: 'SELECT cost_cents AS cost FROM agent_chat_usage_daily WHERE profile_id = $1 AND day = $2',
    values: [profileId, day],
  });
  return rows[0]?.cost ?? 0;
}

/** Today's spend of one conversation owner on a profile (the chat-service bot's per-user cap). */
export async function ownerCostOnDay(
  pool: Pool,
  profileId: string,
  ownerKind: string,
  ownerId: string,
  day: string,
): Promise<number> {
  const { rows } = await pool.query<{ cost: number | null }>(
    `SELECT sum(m.cost_cents) AS cost FROM agent_chat_conversations c JOIN agent_chat_messages m ON m.conversation_id = c.id
     WHERE c.profile_id = $1 AND c.owner_kind = $2 AND c.owner_id = $3 AND m.created_at >= $4::date AND m.created_at < $4::date + 1`,
    [profileId, ownerKind, ownerId, day],
  );
  return Number(rows[0]?.cost ?? 0);
}

export interface UsageSummaryRow {
  profile_slug: string;
  profile_name: string;
  today_cost_cents: number;
  today_requests: number;
  today_input_tokens: number;
  today_output_tokens: number;
  cap_cents: number;
  cap_pct: number;
}

/** One row per profile for the UTC day `day` (YYYY-MM-DD), in the profile list's order. */
export async function usageSummary(pool: Pool, day: string): Promise<UsageSummaryRow[]> {
  const { rows } = await pool.query<UsageSummaryRow>(
    `SELECT p.slug AS profile_slug, p.name AS profile_name,
            coalesce(u.cost_cents, 0)::float8 AS today_cost_cents, coalesce(u.requests, 0)::int AS today_requests,
            coalesce(u.input_tokens, 0)::float8 AS today_input_tokens, coalesce(u.output_tokens, 0)::float8 AS today_output_tokens,
            p.cost_cap_daily_cents AS cap_cents,
            CASE WHEN p.cost_cap_daily_cents = 0 THEN 0 ELSE coalesce(u.cost_cents, 0) / p.cost_cap_daily_cents * 100 END::float8 AS cap_pct
     FROM profiles p LEFT JOIN agent_chat_usage_daily u ON u.profile_id = p.id AND u.day = $1
     ORDER BY p.created_at, p.slug`,
    [day],
  );
  return rows;
}

/** Chat turns answered since `since` (the model's replies; the /ws/live frame's turns per minute). */
export async function chatTurnsSince(pool: Pool, since: Date): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM agent_chat_messages WHERE role = 'assistant' AND created_at > $1`,
    [since],
  );
  return rows[0]!.n;
}
