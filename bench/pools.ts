// How many PostgreSQL connections a bench holds. The server may be shared (DATABASE_URL on the
// machine's PostgreSQL, 100 connections, while other clients hold theirs), and an area that ran
// three platforms at once (the scheduler figure: two chat processes and a seeding platform) with
// the platform's default pool of 40 each went past the server's limit ("53300 too many
// connections"). So every pool a bench opens, in its own process or in a service process it
// starts, is at most BENCH_POOL_SIZE connections (default 10: no figure runs more than 8 writers
// on one pool); the scheduler area, the largest, then peaks near 35 connections.

const size = Number(process.env.BENCH_POOL_SIZE ?? 10);
if (!Number.isInteger(size) || size < 2)
  throw new Error(`BENCH_POOL_SIZE must be an integer of at least 2, got ${process.env.BENCH_POOL_SIZE}`);

/** Connections of each pool the bench opens. */
export const BENCH_POOL_SIZE = size;

/** The platform's setting for the same bound, for configurations and service processes a bench starts. */
export const BENCH_POOL_ENV = { DATABASE_POOL_SIZE: String(size) };
