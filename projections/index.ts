// Every projection the platform runs, registered once. `orchard rebuild <name>` takes these names.

import type { Projection } from '../infra/projections/engine.ts';
import { usersProjections } from './orchestration/users.ts';
import { profilesProjection } from './orchestration/profiles.ts';
import { knowledgeSnippetsProjection } from './orchestration/knowledge.ts';
import { registryProjections } from './registry/index.ts';

export const allProjections: Projection<any>[] = [...usersProjections, profilesProjection, knowledgeSnippetsProjection, ...registryProjections];
