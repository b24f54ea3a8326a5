// The registry's projections, registered in projections/index.ts; the status view reports their lag.

import type { Projection } from '../../infra/processors/projection.ts';
import { auditProjection } from './audit.ts';
import { customersProjection } from './customers.ts';
import { deploymentsProjection } from './deployments.ts';
import { registrySessionsProjection } from './sessions.ts';
import { subscriptionsProjection } from './subscriptions.ts';
import { summaryProjection } from './summary.ts';
import { tokensProjection } from './tokens.ts';
import { trendProjection } from './trend.ts';

export const registryProjections: Projection<any>[] = [
  customersProjection,
  deploymentsProjection,
  subscriptionsProjection,
  tokensProjection,
  registrySessionsProjection,
  trendProjection,
  summaryProjection,
  auditProjection,
];
