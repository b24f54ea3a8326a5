// Failed-login throttling across instances: with REDIS_URL, two servers on one database share
// the counters, so an account locked through one is locked on the other. Without it, each
// counts alone (the control case, which shows the first can fail).

import { randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freshDatabase } from '../../support/database.ts';
import { createAccount } from '../../support/principals.ts';
import { redisAvailable, TEST_REDIS_URL } from '../../support/redis.ts';
import { http, TEST_SECRET_KEY, TestServices } from '../../support/services.ts';

const ADMIN_KEY = 'orch_throttle-admin-key-0000000000000000';

/** Two in-process orchestration servers on one fresh database; 5 failed logins spread over both, then the right password on the first. */
async function lockedAcrossInstances(env: Record<string, string>): Promise<number> {
  const db = await freshDatabase('shared_throttle');
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-throttle-'));
  const base = {
    DATABASE_URL: db.url,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: TEST_SECRET_KEY,
    ADMIN_API_KEY: ADMIN_KEY,
    ...env,
  };
  const [a, b] = [new TestServices(db, { ...base }, 'in-process'), new TestServices(db, { ...base }, 'in-process')];
  try {
    await a.start();
    await b.start();
    const account = await createAccount(a, ADMIN_KEY, 'user');
    // A peer of its own: Redis outlives this run, and the per-address counter must start empty.
    const peer = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
    for (let i = 0; i < 5; i++) {
      const r = await http(`${(i % 2 ? b : a).orch}/auth/login`, {
        json: { email: account.email, password: 'not the password!' },
        peer,
      });
      assert.is(r.status, 401);
    }
    return (await http(`${a.orch}/auth/login`, { json: { email: account.email, password: account.password }, peer }))
      .status;
  } finally {
    await b.stop();
    await a.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const test = suite('failed-login throttling shared through Redis');

test('with REDIS_URL: 5 failures over two instances lock the account on both', async () => {
  if (!(await redisAvailable())) return;
  assert.is(await lockedAcrossInstances({ REDIS_URL: TEST_REDIS_URL }), 401);
});

test('control: without REDIS_URL each instance counts alone, and the account is not locked', async () => {
  assert.is(await lockedAcrossInstances({}), 200);
});

test.run();
