// The e2ee figures alone: `node --import tsx bench/e2ee-run.ts`, one JSON object per line on
// stdout, progress on stderr. BENCH_SECONDS sets each figure's measured time (default 2).

import { e2eeFigures } from './e2ee.ts';

const seconds = process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS);
for (const figure of await e2eeFigures({ seconds })) process.stdout.write(JSON.stringify(figure) + '\n');
