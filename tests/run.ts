// `npm test`: every suite under tests/ (files named *.test.ts) with uvu, against one real
// PostgreSQL server: TEST_DATABASE_URL when set, else an embedded server started for this run.
// Suites run concurrently, each in its own process against its own database (TEST_JOBS, default
// 3: most suites wait on the database, not the CPU). The log's own suites run first and alone:
// they assert exactly when an append becomes visible (and the projection engine how its batches are cut), and readers are gated on the oldest
// transaction of the whole server, so another suite's open transaction would hold them back. Each suite's output is printed whole when
// it ends, then the totals, with the plain closing line CI reads. A suite that failed runs once
// more, alone, at the end; if it passes then, it is named as flaky and counted by its second run
// (`TEST_RERUN=0` turns this off).
// Arguments filter suites by path substring: `node --import tsx tests/run.ts eventstore`.
// TEST_LOG=esdb puts the services' log on an EventStoreDB test double (tests/support/test-log.ts).

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesUnder } from './support/files.ts';
import { runSuiteProcess, testServer, type SuiteOutcome } from './support/suite-process.ts';
import { logOnEsdb } from './support/test-log.ts';

const root = path.dirname(fileURLToPath(import.meta.url));

const filters = process.argv.slice(2);
const suites = (await filesUnder(root, '.test.ts')).filter(
  (f) => filters.length === 0 || filters.some((x) => f.includes(x)),
);
const jobs = Math.max(1, Number(process.env.TEST_JOBS ?? 3));
/** Suites that run alone, before the others (see above). */
const EXCLUSIVE = /eventstore\.|infra\/projections\./;

// TEST_LOG=esdb (tests/run-esdb.ts): said first, so nobody reads the counts as the PostgreSQL log's.
if (logOnEsdb) {
  console.log(
    'log: an EventStoreDB test double per suite database (TEST_LOG=esdb); suites that build a log themselves (tests/infra/eventstore.*, tests/infra/projections.*) keep PostgreSQL\n',
  );
}
const server = await testServer('orchard-test-');
const serverUrl = server.url;
type Outcome = SuiteOutcome;

/** One suite in its own process; its output is kept and printed whole when it ends. */
const runSuite = (file: string) =>
  runSuiteProcess(file, serverUrl, (o) => `${path.relative(root, file)} (${o.seconds.toFixed(1)} s)`);

const outcomes: Outcome[] = [];
const flaky: string[] = [];
/** Some test failed, or the suite crashed before uvu counted (an import error, a failing before hook). */
const failedSuite = (o: Outcome) => o.passed + o.skipped < o.total || o.code !== 0;
try {
  const exclusive = suites.filter((f) => EXCLUSIVE.test(f));
  for (const file of exclusive) outcomes.push(await runSuite(file));
  const queue = suites.filter((f) => !EXCLUSIVE.test(f));
  await Promise.all(
    Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      for (let file = queue.shift(); file; file = queue.shift()) outcomes.push(await runSuite(file));
    }),
  );
  // A suite that failed runs once more, alone, once the others are done: a failure that comes
  // back is a failure; one that does not is printed as flaky by name, to be fixed, not hidden.
  const failing = outcomes.filter(failedSuite);
  if (failing.length > 0 && process.env.TEST_RERUN !== '0') {
    for (const first of failing) {
      process.stdout.write(`rerunning ${path.relative(root, first.file)} alone (it failed)\n\n`);
      const again = await runSuite(first.file);
      if (!failedSuite(again)) {
        flaky.push(first.file);
        outcomes.splice(outcomes.indexOf(first), 1, again);
      }
    }
  }
} finally {
  await server.stop();
}

const total = outcomes.reduce((n, o) => n + o.total, 0);
const passed = outcomes.reduce((n, o) => n + o.passed, 0);
const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
// A suite that crashed before uvu counted (an import error, a failing before hook) is a failure.
const crashed = outcomes.filter((o) => o.code !== 0 && o.total === o.passed + o.skipped);
for (const o of crashed) process.stdout.write(`suite failed to run: ${path.relative(root, o.file)} (exit ${o.code})\n`);
const failed = total - passed - skipped + crashed.length;
for (const file of flaky)
  process.stdout.write(`flaky: ${path.relative(root, file)} failed, then passed when run again alone\n`);
console.log(`\n${suites.length} suites, ${jobs} at a time`);
console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 || total === 0 ? 1 : 0;
