// Every projection the platform runs, registered once. `orchard rebuild <name>` takes these names.

import type { Projection } from '../infra/projections/engine.ts';
import { estateProjections } from './orchestration/estate.ts';
import { usersProjections } from './orchestration/users.ts';

export const allProjections: Projection<any>[] = [...usersProjections, ...estateProjections];
