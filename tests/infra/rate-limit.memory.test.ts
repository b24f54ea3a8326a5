// The in-process backend against the rate limiter's contract.

import { MemoryRateLimiter } from '../../infra/rate-limit/memory.ts';
import { rateLimiterContract } from './rate-limit.contract.ts';

rateLimiterContract('in-process', async () => ({
  make: (clock) => new MemoryRateLimiter(clock),
  cleanup: async () => {},
}));
