// `npm run test:esdb`: a named set of route and end-to-end suites with the log on EventStoreDB,
// that is, on the in-process EventStoreDB test double (TEST_LOG=esdb: a fresh double per suite
// database, read models on the suite's PostgreSQL database; tests/support/test-log.ts). The set
// touches every service and every consumer of the log, chosen so that the whole run stays short:
//
//   orchestration projections ... tasks/routes, tasks/projection (rebuild), users/projection
//                                 (rebuild, incl. the audit log)
//   chat projections ............ accounts/projection (rebuild), scheduled/projection (rebuild,
//                                 the scheduler's firings)
//   registry projections ........ registry/projections (rebuild), customers/routes, rollups/routes
//                                 (the event feed, paged by position; status and projection lag)
//   audit chain ................. log/routes (the raw log paged by position, proofs against the
//                                 chain; the tamper step is PostgreSQL-only)
//   /ws and the chat hub ........ log/ws (/ws resume from a position, slow consumer, /ws/live),
//                                 e2e/chat (two instances, the hub from the log), e2e/chat-spaces
//   scheduler ................... e2e/chat-meetings (reminders fired by two service processes)
//   connector ................... chatsvc/e2e (orchestration's bot against the real chat service)
//   managed updates ............. updates/routes (checks, apply, journal and write gate from the log)
//   rebuild and replay .......... e2e/cli (`orchard replay`, `orchard rebuild` as child processes)
//   the stand-in for newcomers .. e2e/dev-esdb (`orchard dev esdb`, a service on it)
//
// Arguments and TEST_JOBS work as for tests/run.ts, which runs the set.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));

export const ESDB_SET = [
  'orchestration/tasks/routes.test.ts',
  'orchestration/tasks/projection.test.ts',
  'orchestration/users/projection.test.ts',
  'orchestration/log/routes.test.ts',
  'orchestration/log/ws.test.ts',
  'orchestration/chatsvc/e2e.test.ts',
  'chat/accounts/projection.test.ts',
  'chat/scheduled/projection.test.ts',
  'registry/projections.test.ts',
  'registry/customers/routes.test.ts',
  'registry/rollups/routes.test.ts',
  'updates/routes.test.ts',
  'e2e/chat.test.ts',
  'e2e/chat-spaces.test.ts',
  'e2e/chat-meetings.test.ts',
  'e2e/cli.test.ts',
  'e2e/dev-esdb.test.ts',
];

// A renamed suite must not drop out of the set unnoticed.
const missing = ESDB_SET.filter((f) => !existsSync(path.join(root, f)));
if (missing.length > 0) {
  console.error(`tests/run-esdb.ts names suites that do not exist: ${missing.join(', ')}`);
  process.exit(2);
}
const chosen =
  process.argv.length > 2 ? ESDB_SET.filter((f) => process.argv.slice(2).some((x) => f.includes(x))) : ESDB_SET;
const began = Date.now();
const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'run.ts'), ...chosen.map((f) => `/${f}`)], {
  env: { ...process.env, TEST_LOG: 'esdb' },
  stdio: 'inherit',
});
child.on('close', (code) => {
  console.log(
    `the EventStoreDB set (log on the test double): ${chosen.length} suites in ${((Date.now() - began) / 1000).toFixed(0)} s`,
  );
  process.exit(code ?? 1);
});
