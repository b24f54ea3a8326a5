// `npm test`: every suite under tests/ (files named *.test.ts) with uvu, against one real
// PostgreSQL server: TEST_DATABASE_URL when set, else an embedded server started for this run.
// Arguments filter suites by path substring: `node --import tsx tests/run.ts eventstore`.

import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from 'uvu/run';
import { startEmbeddedPostgres } from '../infra/db/embedded.ts';

const root = path.dirname(fileURLToPath(import.meta.url));

async function findSuites(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await findSuites(full)));
    else if (entry.name.endsWith('.test.ts')) found.push(full);
  }
  return found.sort();
}

const filters = process.argv.slice(2);
const suites = (await findSuites(root)).filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

let stop = async () => {};
if (process.env.TEST_DATABASE_URL) {
  process.env.ORCHARD_TEST_SERVER_URL = process.env.TEST_DATABASE_URL;
} else {
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-test-'));
  const server = await startEmbeddedPostgres(dir, { persistent: false, durable: false });
  process.env.ORCHARD_TEST_SERVER_URL = server.url;
  stop = async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  };
}

// uvu prints "Total" and "Passed"; we add the plain closing line CI reads.
let output = '';
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
  output += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
  if (output.length > 4096) output = output.slice(-4096);
  return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
}) as typeof process.stdout.write;

try {
  await run(suites.map((file) => ({ name: path.relative(root, file), file })), { bail: false });
} finally {
  await stop();
}
process.stdout.write = write;
const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
const skipped = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
console.log(`\ntests: ${passed} passed, ${total - passed - skipped} failed, ${skipped} skipped`);
if (total === 0) process.exitCode = 1;
// Open handles (pools, servers) of a failed suite must not keep the run alive.
setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref();
