// The live and audit figures alone: `node --import tsx bench/audit-run.ts`, one JSON object per
// line on stdout, progress on stderr. DATABASE_URL names a server to use (temporary databases are
// created there and dropped); without it an embedded server runs in a temporary directory.
// BENCH_SECONDS (default 4) sets the measured time of the append figures; AUDIT_EXPORT_EVENTS
// (default 1,000,000) the size of the export audit_verify reads.

import { auditFigures } from './audit.ts';
import { benchServer } from './server.ts';

const progress = (message: string) => process.stderr.write(`bench: ${message}\n`);
const seconds = process.env.BENCH_SECONDS === undefined ? undefined : Number(process.env.BENCH_SECONDS);
const exportEvents =
  process.env.AUDIT_EXPORT_EVENTS === undefined ? undefined : Number(process.env.AUDIT_EXPORT_EVENTS);
const server = await benchServer(progress);
try {
  for (const figure of await auditFigures(server.url, { progress, seconds, exportEvents }))
    process.stdout.write(JSON.stringify(figure) + '\n');
} finally {
  await server.stop();
}
