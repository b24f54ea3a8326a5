// Every projection the platform runs. `orchard rebuild <name>` takes these names.

import type { Projection } from '../infra/projections/engine.ts';
import { apiKeyRotationsProjection } from './orchestration/api-key-rotations.ts';
import { securityAuditProjection } from './orchestration/security-audit.ts';
import { sessionsProjection } from './orchestration/sessions.ts';
import { usersProjection } from './orchestration/users.ts';

export const allProjections: Projection[] = [usersProjection, sessionsProjection, apiKeyRotationsProjection, securityAuditProjection];
