// Who sees which events on `/ws`: one rule per stream category (the name before the first `-`,
// declared in domain/orchestration/streams.ts).
//
// - An admin sees every event.
// - Anyone else sees an event only when its category has a rule here that admits them; a
//   category without a rule (other services' streams, reservations, profiles and knowledge) is
//   admin-only. Anonymous sockets are admitted only by `PUBLIC` categories (health-style events:
//   none are written yet).
// - Personal fields (message text, e-mail and the like) reach admins only; credential material
//   (password hashes, sealed keys) reaches no one, though the log holds no plaintext secret.
//
// - Projects, tasks and agents are readable by every account through the API, so accounts see
//   their events (a project's `repo_path` reaches admins only, as in the API). An agent
//   credential sees its own project's: the project, its tasks and its agents.
//
// To extend: add the category with a rule over the viewer, giving `Viewer` the facts the rule
// needs (loaded once when the socket opens).

import type { RecordedEvent } from '../../../infra/eventstore/port.ts';
import { categoryOf } from './stream-deciders.ts';
import { ORCH_STREAMS, userStream } from '../../../domain/orchestration/streams.ts';

export interface Viewer {
  kind: 'admin' | 'account' | 'agent' | 'service' | 'anonymous';
  /** The principal's user id (accounts, agents, the runner); null when anonymous. */
  userId: string | null;
  /**
   * An agent's project: its id and the streams in it (the project's, its tasks', its agents'),
   * loaded when the socket opens and grown as events creating tasks and agents in it pass.
   */
  project?: { id: string; streams: Set<string> };
}

type Rule = (event: RecordedEvent, viewer: Viewer) => boolean;

const field = (event: RecordedEvent, name: string): unknown => (event.data as Record<string, unknown>)[name];
const isAccount = (v: Viewer) => v.kind === 'account';

/** The event belongs to the agent viewer's project (a creation event adds its stream). */
function inAgentProject(event: RecordedEvent, viewer: Viewer): boolean {
  const project = viewer.kind === 'agent' ? viewer.project : undefined;
  if (!project) return false;
  if (project.streams.has(event.stream)) return true;
  if (field(event, 'project_id') !== project.id) return false;
  project.streams.add(event.stream);
  return true;
}
const projectWork: Rule = (e, v) => isAccount(v) || inAgentProject(e, v);

/** Rules for signed-in principals other than admins, by stream category. */
export const CATEGORY_RULES: Readonly<Record<string, Rule>> = {
  // One's own account: its stream, its sessions, and the security audit facts about it.
  [ORCH_STREAMS.user.category]: (e, v) => isAccount(v) && v.userId !== null && e.stream === userStream(v.userId),
  [ORCH_STREAMS.session.category]: (e, v) => isAccount(v) && field(e, 'user_id') === v.userId,
  [ORCH_STREAMS.audit.category]: (e, v) =>
    isAccount(v) && [field(e, 'user_id'), field(e, 'target_user_id'), field(e, 'actor_id')].includes(v.userId),
  // The estate is readable by every account through the API (GET /api/v1/knowledge/*).
  [ORCH_STREAMS.estate_document.category]: (_e, v) => isAccount(v),
  [ORCH_STREAMS.estate_run.category]: (_e, v) => isAccount(v),
  [ORCH_STREAMS.project.category]: projectWork,
  [ORCH_STREAMS.task.category]: projectWork,
  [ORCH_STREAMS.agent.category]: projectWork,
};

/** Categories whose events anonymous sockets receive too. */
export const PUBLIC: ReadonlySet<string> = new Set<string>();

export function mayView(event: RecordedEvent, viewer: Viewer): boolean {
  if (viewer.kind === 'admin') return true;
  const category = categoryOf(event.stream);
  if (PUBLIC.has(category)) return true;
  if (viewer.kind === 'anonymous') return false;
  return CATEGORY_RULES[category]?.(event, viewer) ?? false;
}

/** Fields holding personal data, or shown to admins only by the API (`repo_path`): admins only. */
export const PERSONAL_FIELDS: ReadonlySet<string> = new Set([
  'repo_path',
  'email',
  'text',
  'body',
  'content',
  'message',
  'message_text',
  'display_name',
  'bio',
  'pronouns',
  'avatar_url',
  'phone',
  'name_on_card',
]);

/** Credential material: never sent on a socket. */
const isCredential = (key: string) =>
  key === 'password_hash' || key === 'api_key_hash' || key.endsWith('_sealed') || key.endsWith('_secret');

function strip(value: unknown, personal: boolean, depth: number): unknown {
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => strip(v, personal, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) {
    if (isCredential(key) || (personal && PERSONAL_FIELDS.has(key))) continue;
    out[key] = strip(member, personal, depth + 1);
  }
  return out;
}

/** The event's data as `viewer` may see it. */
export function visibleData(event: RecordedEvent, viewer: Viewer): Record<string, unknown> {
  return strip(event.data, viewer.kind !== 'admin', 0) as Record<string, unknown>;
}
