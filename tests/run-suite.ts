// One suite file in this process (tests/run.ts starts one per suite, with the test server's URL).

import path from 'node:path';
import { run } from 'uvu/run';

const file = process.argv[2]!;
await run([{ name: path.basename(file), file }], { bail: false });
// Open handles (pools, servers) of a failed suite must not keep the process alive.
setTimeout(() => process.exit(process.exitCode ?? 0), 500).unref();
