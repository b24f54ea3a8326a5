// The `profiles` read model: one row per agent profile, every field of the spec's table, as the
// profile routes show it. Rows and queries live here with the writes.

import { INTEGRATION_EVENT_TYPES, type IntegrationEvent } from '../../domain/orchestration/chatsvc/events.ts';
import {
  PROFILE_EVENT_TYPES,
  SETTINGS_FIELDS,
  type AgentProfileStreamEvent,
  type Profile,
} from '../../domain/orchestration/profiles/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

/** Columns in the order the API shows a profile. */
export const PROFILE_COLUMNS = [
  'id',
  'slug',
  'name',
  'description',
  'security_tier',
  'model',
  'system_prompt',
  'max_tokens',
  'temperature',
  'pii_scrub',
  'cost_cap_daily_cents',
  'rate_limit_rpm',
  'rate_limit_rpd',
  'enabled',
  'knowledge_search_enabled',
  'channel_reply_mode',
  'can_use_tools',
  'integrations',
  'conversation_ttl_hours',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof Profile)[];

// Field names come from the decider's fixed list, never from a request: safe to name in SQL.
const UPDATABLE = new Set<string>(SETTINGS_FIELDS);

export const profilesProjection = defineProjection<AgentProfileStreamEvent | IntegrationEvent>({
  name: 'profiles',
  // A chat-service integration shows as the profile's `integrations.chatsvc` (metadata only).
  handles: [...PROFILE_EVENT_TYPES, ...INTEGRATION_EVENT_TYPES],
  tables: ['profiles'],
  async apply(event, tx) {
    switch (event.type) {
      case 'ProfileCreated': {
        const d = event.data;
        await tx.query(
          `INSERT INTO profiles (id, slug, name, description, security_tier, model, system_prompt, max_tokens, temperature, pii_scrub,
             cost_cap_daily_cents, rate_limit_rpm, rate_limit_rpd, enabled, knowledge_search_enabled, channel_reply_mode, can_use_tools,
             integrations, conversation_ttl_hours, template, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $21)`,
          [
            d.profile_id,
            d.slug,
            d.name,
            d.description,
            d.security_tier,
            d.model,
            d.system_prompt,
            d.max_tokens,
            d.temperature,
            d.pii_scrub,
            d.cost_cap_daily_cents,
            d.rate_limit_rpm,
            d.rate_limit_rpd,
            d.enabled,
            d.knowledge_search_enabled,
            d.channel_reply_mode,
            d.can_use_tools,
            JSON.stringify(d.integrations ?? {}),
            d.conversation_ttl_hours,
            d.template,
            d.at,
          ],
        );
        return;
      }
      case 'ProfileUpdated': {
        const fields = Object.entries(event.data.changes).filter(([field]) => UPDATABLE.has(field));
        const sets = fields.map(([field], i) => `${field} = $${i + 3}`);
        await tx.query(`UPDATE profiles SET ${[...sets, 'updated_at = $2'].join(', ')} WHERE id = $1`, [
          event.data.profile_id,
          event.data.at,
          ...fields.map(([, value]) => value),
        ]);
        return;
      }
      case 'ProfileReplyModeChanged':
        await tx.query('UPDATE profiles SET channel_reply_mode = $2, updated_at = $3 WHERE id = $1', [
          event.data.profile_id,
          event.data.channel_reply_mode,
          event.data.at,
        ]);
        return;
      case 'ProfileKnowledgeSearchEnabled':
        await tx.query('UPDATE profiles SET knowledge_search_enabled = true, updated_at = $2 WHERE id = $1', [
          event.data.profile_id,
          event.data.at,
        ]);
        return;
      case 'ChatIntegrationConnected': {
        const d = event.data;
        const summary = {
          instance_url: d.instance_url,
          bot_user_id: d.bot_user_id,
          bot_username: d.bot_username,
          token_prefix: d.token_prefix,
          token_expires_at: d.token_expires_at,
          status: 'active',
          verify_tls: d.verify_tls,
          identity_fingerprint: d.identity_fingerprint,
        };
        await tx.query(
          `UPDATE profiles SET integrations = integrations || jsonb_build_object('chatsvc', $2::jsonb) WHERE id = $1`,
          [d.profile_id, JSON.stringify(summary)],
        );
        return;
      }
      case 'IntegrationRevokedExternally':
        await tx.query(
          `UPDATE profiles SET integrations = jsonb_set(integrations, '{chatsvc,status}', '"revoked_externally"') WHERE id = $1 AND integrations ? 'chatsvc'`,
          [event.data.profile_id],
        );
        return;
      case 'ChatIntegrationDeleted':
        await tx.query(`UPDATE profiles SET integrations = integrations - 'chatsvc' WHERE id = $1`, [
          event.data.profile_id,
        ]);
        return;
      default:
        return; // knowledge events are the knowledge_snippets projection's
    }
  },
});

// --- queries ---------------------------------------------------------------------------------

export type ProfileRow = Omit<Profile, 'created_at' | 'updated_at'> & { created_at: Date; updated_at: Date };

const SELECT = `SELECT ${PROFILE_COLUMNS.join(', ')} FROM profiles`;

export async function listProfiles(pool: Pool): Promise<ProfileRow[]> {
  return (await pool.query<ProfileRow>(`${SELECT} ORDER BY created_at, slug`)).rows;
}

export async function profileBySlug(pool: Pool, slug: string): Promise<ProfileRow | null> {
  return (await pool.query<ProfileRow>(`${SELECT} WHERE slug = $1`, [slug])).rows[0] ?? null;
}

/** By id; a malformed id is simply not found. */
export async function profileById(pool: Pool, id: string): Promise<ProfileRow | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  return (await pool.query<ProfileRow>(`${SELECT} WHERE id = $1`, [id])).rows[0] ?? null;
}
