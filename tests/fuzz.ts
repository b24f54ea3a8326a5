// `npm run test:fuzz`: the OpenAPI fuzzer (tests/platform/openapi-fuzz.fuzz.ts) in a process of
// its own against one PostgreSQL server (TEST_DATABASE_URL when set, else an embedded one). Not
// part of `npm test`: it sends some ten thousand requests, several hundred of them hashing a
// password, which takes minutes on a 2-core machine. FUZZ_* variables pass through (see the suite).
// The closing line is plain, like tests/run.ts: `fuzz: N passed, N failed, N skipped`.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runSuiteProcess, testServer } from './support/suite-process.ts';

const root = path.dirname(fileURLToPath(import.meta.url));
const file = path.join(root, 'platform', 'openapi-fuzz.fuzz.ts');

const server = await testServer('orchard-fuzz-');
try {
  const o = await runSuiteProcess(
    file,
    server.url,
    (outcome) => `${path.relative(root, file)} (${outcome.seconds.toFixed(1)} s)`,
  );
  const failed = o.total - o.passed - o.skipped + (o.code !== 0 && o.total === o.passed + o.skipped ? 1 : 0);
  console.log(`fuzz: ${o.passed} passed, ${failed} failed, ${o.skipped} skipped`);
  process.exitCode = failed > 0 || o.total === 0 ? 1 : 0;
} finally {
  await server.stop();
}
