// The aggregates whose folded state `GET /api/v1/admin/streams/{stream}?as_of=` shows: a stream
// category (declared in domain/streams.ts; the name before the first `-`) and the decider that folds it. Streams of other
// categories (audit facts, token uses) have events but no state.

import { RESERVATION_EVENT_TYPES, reservationDecider } from '../../../domain/shared/reservation.ts';
import { categoryOf } from '../../../domain/shared/streams.ts';
import { ALL_STREAM_CATEGORIES } from '../../../domain/streams.ts';
import { CHAT_STREAMS } from '../../../domain/chat/streams.ts';
import { ORCH_STREAMS } from '../../../domain/orchestration/streams.ts';
import { REGISTRY_STREAMS } from '../../../domain/registry/streams.ts';
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
  [ORCH_STREAMS.user.category]: folder(userDecider),
  [ORCH_STREAMS.session.category]: folder(sessionDecider),
  [ORCH_STREAMS.agent_profile.category]: folder(profileDecider),
  [ORCH_STREAMS.estate_document.category]: folder(estateDocumentDecider),
  [ORCH_STREAMS.estate_run.category]: folder(ingestRunDecider),
  [CHAT_STREAMS.user.category]: folder(accountDecider),
  [CHAT_STREAMS.session.category]: folder(chatSessionDecider),
  [CHAT_STREAMS.totp.category]: folder(totpDecider),
  [CHAT_STREAMS.keys.category]: folder(keysDecider),
  [CHAT_STREAMS.prekey.category]: folder(prekeyClaimDecider),
  [CHAT_STREAMS.blocks.category]: folder(blockDecider),
  [CHAT_STREAMS.invite.category]: folder(inviteDecider),
  [REGISTRY_STREAMS.customer.category]: folder(customerDecider),
  [REGISTRY_STREAMS.deployment.category]: folder(deploymentDecider),
  [REGISTRY_STREAMS.subscription.category]: folder(subscriptionDecider),
  [REGISTRY_STREAMS.token.category]: folder(tokenDecider),
  [REGISTRY_STREAMS.session.category]: folder(registrySessionDecider),
  // Reservations: every declared category carrying the reservation events.
  ...Object.fromEntries(
    ALL_STREAM_CATEGORIES.filter((c) =>
      c.events.some((type) => (RESERVATION_EVENT_TYPES as readonly string[]).includes(type)),
    ).map((c) => [c.category, folder(reservationDecider)]),
  ),
};

export { categoryOf };

/** The decider folding `stream`, or null. */
export function folderFor(stream: string): Folder | null {
  return BY_CATEGORY[categoryOf(stream)] ?? null;
}

/** State as JSON: Maps become objects, Sets arrays, bigints strings. */
export function stateJson(state: unknown): unknown {
  return JSON.parse(
    JSON.stringify(state, (_key, value) => {
      if (value instanceof Map) return Object.fromEntries(value);
      if (value instanceof Set) return [...value];
      if (typeof value === 'bigint') return value.toString();
      return value;
    }),
  );
}
