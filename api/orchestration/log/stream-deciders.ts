// The aggregates whose folded state `GET /api/v1/admin/streams/{stream}?as_of=` shows: a stream
// category (the name before the first `-`) and the decider that folds it. Streams of other
// categories (audit facts, token uses) have events but no state.

import { reservationDecider } from '../../../domain/shared/reservation.ts';
import type { Decider, DomainEvent } from '../../../domain/shared/decider.ts';
import { sessionDecider } from '../../../domain/orchestration/users/session.ts';
import { userDecider } from '../../../domain/orchestration/users/decider.ts';
import { profileDecider } from '../../../domain/orchestration/profiles/decider.ts';
import { estateDocumentDecider, ingestRunDecider } from '../../../domain/orchestration/estate/decider.ts';
import { totpDecider } from '../../../domain/chat/totp/decider.ts';
import { blockDecider } from '../../../domain/chat/users/decider.ts';
import { chatSessionDecider } from '../../../domain/chat/sessions/decider.ts';
import { inviteDecider } from '../../../domain/chat/invites/decider.ts';
import { keysDecider } from '../../../domain/chat/keys/decider.ts';
import { prekeyClaimDecider } from '../../../domain/chat/keys/claim.ts';
import { accountDecider } from '../../../domain/chat/accounts/decider.ts';
import { customerDecider } from '../../../domain/registry/customers/decider.ts';
import { registrySessionDecider } from '../../../domain/registry/sessions/decider.ts';
import { tokenDecider } from '../../../domain/registry/tokens/decider.ts';
import { deploymentDecider } from '../../../domain/registry/deployments/decider.ts';
import { subscriptionDecider } from '../../../domain/registry/subscriptions/decider.ts';

type Folder = Pick<Decider<unknown, unknown, DomainEvent>, 'initialState' | 'evolve'>;
const folder = <S, C, E extends DomainEvent>(d: Decider<S, C, E>): Folder => d as unknown as Folder;

const BY_CATEGORY: Record<string, Folder> = {
  user: folder(userDecider),
  session: folder(sessionDecider),
  agent_profile: folder(profileDecider),
  estate_document: folder(estateDocumentDecider),
  estate_run: folder(ingestRunDecider),
  chat_user: folder(accountDecider),
  chat_session: folder(chatSessionDecider),
  chat_totp: folder(totpDecider),
  chat_keys: folder(keysDecider),
  chat_prekey: folder(prekeyClaimDecider),
  chat_blocks: folder(blockDecider),
  chat_invite: folder(inviteDecider),
  customer: folder(customerDecider),
  deployment: folder(deploymentDecider),
  subscription: folder(subscriptionDecider),
  registry_token: folder(tokenDecider),
  registry_session: folder(registrySessionDecider),
};

export function categoryOf(stream: string): string {
  const dash = stream.indexOf('-');
  return dash === -1 ? stream : stream.slice(0, dash);
}

/** The decider folding `stream`, or null (reservations end in `_reservation`). */
export function folderFor(stream: string): Folder | null {
  const category = categoryOf(stream);
  if (category.endsWith('_reservation')) return folder(reservationDecider);
  return BY_CATEGORY[category] ?? null;
}

/** State as JSON: Maps become objects, Sets arrays, bigints strings. */
export function stateJson(state: unknown): unknown {
  return JSON.parse(JSON.stringify(state, (_key, value) => {
    if (value instanceof Map) return Object.fromEntries(value);
    if (value instanceof Set) return [...value];
    if (typeof value === 'bigint') return value.toString();
    return value;
  }));
}
