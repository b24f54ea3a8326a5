// `node --import tsx bench/updates-run.ts`: the managed-update figures alone, one JSON line each
// on stdout (progress, with each apply's phases, on stderr). They need the installed PostgreSQL
// (`pg_config --bindir`: its server for the throw-away cluster, its pg_dump and psql for the
// sidecar), so DATABASE_URL is not used. BENCH_SECONDS (default 4) sets the signed-request
// figure's measured time; UPDATES_BENCH_EVENTS (default 100,000) the events in the log.

import { updatesFigures } from './updates.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = Number(process.env.BENCH_SECONDS ?? 4);
const events = process.env.UPDATES_BENCH_EVENTS === undefined ? undefined : Number(process.env.UPDATES_BENCH_EVENTS);
for (const figure of await updatesFigures({ progress, seconds, events }))
  process.stdout.write(JSON.stringify(figure) + '\n');
