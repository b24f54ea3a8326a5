// Every projection the platform runs, registered once. `orchard rebuild <name>` takes these names.

import type { Projection } from '../infra/projections/engine.ts';
import { chatUsersProjection } from './chat/accounts.ts';
import { chatInvitesProjection } from './chat/invites.ts';
import { chatKeysProjection } from './chat/keys.ts';
import { chatSessionsProjection } from './chat/sessions.ts';
import { chatTotpProjection } from './chat/totp.ts';
import { chatBlocksProjection, chatReportsProjection } from './chat/users.ts';
import { estateProjections } from './orchestration/estate.ts';
import { usersProjections } from './orchestration/users.ts';
import { profilesProjection } from './orchestration/profiles.ts';
import { knowledgeSnippetsProjection } from './orchestration/knowledge.ts';
import { registryProjections } from './registry/index.ts';

export const allProjections: Projection<any>[] = [
  ...usersProjections, profilesProjection, knowledgeSnippetsProjection, ...estateProjections,
  ...registryProjections,
  chatUsersProjection, chatSessionsProjection, chatTotpProjection, chatKeysProjection, chatBlocksProjection, chatReportsProjection, chatInvitesProjection,
];
