// The Redis of a test run: TEST_REDIS_URL, else the machine's 127.0.0.1:6379 (every development
// and CI machine runs one). Where none answers, Redis suites say so and skip: `npm test` must
// pass on a machine without it.

import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export async function redisAvailable(): Promise<boolean> {
  const probe = new Redis(TEST_REDIS_URL, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    console.log(`  (no Redis at ${TEST_REDIS_URL}: Redis backend cases skipped)`);
    return false;
  } finally {
    probe.disconnect();
  }
}
