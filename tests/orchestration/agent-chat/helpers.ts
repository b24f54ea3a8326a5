// Shared set-up of the agent-chat suites: profiles made through the API, and chat calls.

import { http, type Reply, type RequestOptions, type TestServices } from '../../support/services.ts';

export async function makeProfile(
  s: TestServices,
  adminKey: string,
  body: Record<string, unknown>,
): Promise<{ id: string; slug: string }> {
  const { enabled, conversation_ttl_hours, pii_scrub, ...create } = body;
  const r = await http(`${s.orch}/api/v1/agent-chat/profiles`, {
    headers: { 'X-API-Key': adminKey },
    json: { name: `Bot ${create.slug}`, ...create },
  });
  if (r.status !== 201) throw new Error(`create profile: ${r.status} ${r.text}`);
  const changes = Object.fromEntries(
    Object.entries({ enabled, conversation_ttl_hours, pii_scrub }).filter(([, v]) => v !== undefined),
  );
  if (Object.keys(changes).length) {
    const u = await http(`${s.orch}/api/v1/agent-chat/profiles/${create.slug}`, {
      method: 'PUT',
      headers: { 'X-API-Key': adminKey },
      json: changes,
    });
    if (u.status !== 200) throw new Error(`update profile: ${u.status} ${u.text}`);
  }
  return { id: r.body.id, slug: create.slug as string };
}

export async function addSnippet(
  s: TestServices,
  adminKey: string,
  profileId: string,
  title: string,
  content: string,
): Promise<void> {
  const r = await http(`${s.orch}/api/v1/bots/${profileId}/knowledge`, {
    headers: { 'X-API-Key': adminKey },
    json: { title, content },
  });
  if (r.status !== 201) throw new Error(`add snippet: ${r.status} ${r.text}`);
}

export function publicChat(s: TestServices, slug: string, body: unknown, options: RequestOptions = {}): Promise<Reply> {
  return http(`${s.orch}/api/v1/public/agents/chat/${slug}`, { method: 'POST', json: body, ...options });
}

export function privateChat(
  s: TestServices,
  slug: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<Reply> {
  return http(`${s.orch}/api/v1/agent-chat/chat/${slug}`, { method: 'POST', json: body, headers });
}

export async function auditEntries(s: TestServices, adminKey: string, limit = 100): Promise<any[]> {
  const r = await http(`${s.orch}/api/v1/agent-chat/audit?limit=${limit}`, { headers: { 'X-API-Key': adminKey } });
  if (r.status !== 200) throw new Error(`audit: ${r.status} ${r.text}`);
  return r.body;
}

let peerSeq = 0;
/** A peer address no other test of the run uses (so per-client buckets start empty). */
export const freshPeer = () => `198.18.${Math.floor(++peerSeq / 250)}.${(peerSeq % 250) + 1}`;
