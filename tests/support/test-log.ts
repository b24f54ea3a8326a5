// Which log the suites' services run on. By default the PostgreSQL log (the `events` table of the
// suite's database). With TEST_LOG=esdb, every database a suite creates gets its own log: a fresh
// in-process EventStoreDB test double (tests/doubles/esdb-test-server.ts), handed to the services
// as EVENTSTORE_URL, while read models stay on the suite's PostgreSQL database. Keyed by the
// database, so everything a suite opens on one database (a second platform, a service process,
// a seeding platform) shares one log, and two databases never share one.
//
// Suites that build a log themselves (tests/infra/eventstore.*, the projection engine's gate
// tests) are not affected: they test the PostgreSQL log, and keep it under the switch.

import type { EsdbTestServer } from '../doubles/esdb-test-server.ts';

type Double = EsdbTestServer;

const SETTINGS = ['postgres', 'esdb'] as const;
const setting = process.env.TEST_LOG?.trim() || 'postgres';
if (!(SETTINGS as readonly string[]).includes(setting))
  throw new Error(`TEST_LOG must be one of ${SETTINGS.join(', ')} (got ${JSON.stringify(setting)})`);

/** True when the suites' services run their log on the EventStoreDB test double. */
export const logOnEsdb = setting === 'esdb';

const doubles = new Map<string, Promise<Double>>();

/** The environment that puts the log of `databaseUrl`'s services where TEST_LOG says: `{}` or `{ EVENTSTORE_URL }`. */
export async function testLogEnv(databaseUrl: string): Promise<Record<string, string>> {
  if (!logOnEsdb) return {};
  let double = doubles.get(databaseUrl);
  if (!double) {
    // Imported here: the double needs @grpc/grpc-js, and suites on the PostgreSQL log never load it.
    // A `$stats-*` event every 5 s (a real node: every 30 s), so every suite's log holds system
    // events among its own, as a server's does, and every reader has to skip them.
    double = import('../doubles/esdb-test-server.ts').then(({ startEsdbTestServer }) =>
      startEsdbTestServer({ statsIntervalMs: 5_000 }),
    );
    doubles.set(databaseUrl, double);
  }
  return { EVENTSTORE_URL: (await double).url };
}

/** Stop the log of `databaseUrl` (with the database it belongs to). */
export async function stopTestLog(databaseUrl: string): Promise<void> {
  const double = doubles.get(databaseUrl);
  if (!double) return;
  doubles.delete(databaseUrl);
  await (await double).stop();
}
