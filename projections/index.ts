// Every projection the platform runs. `orchard rebuild <name>` takes these names.

import type { Projection } from '../infra/projections/engine.ts';
import { usersProjection } from './orchestration/users.ts';

export const allProjections: Projection[] = [usersProjection];
