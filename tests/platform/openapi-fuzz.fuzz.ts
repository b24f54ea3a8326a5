// `npm run test:fuzz` (tests/fuzz.ts; not part of `npm test`, it takes minutes): the three
// services fuzzed against their own OpenAPI documents (issue 30). For every operation,
// valid requests generated from its request schema (json-schema-faker) as the right principal,
// then every mutation kind (tests/platform/fuzz/mutations.ts: wrong types, missing required
// fields, huge strings, NUL and lone surrogates, negative and overflowing numbers, 5,000-level
// nesting, unknown and repeated query parameters, wrong content types, malformed JSON, no
// credentials, a lesser principal). It fails on any 5xx (a declared 502/503 with its declared
// body excepted), any undeclared status or media type, any JSON body the declared schema (ajv)
// refuses, a request that does not answer within its timeout, and any unhandled error or stack
// trace in the log.
//
// Seeded and bounded: FUZZ_SEED (default 30; `random` for a new one each run; printed on every
// run and in every finding), FUZZ_VALID valid requests per operation (default 2), FUZZ_ROUNDS
// rounds of every mutation kind per operation (default 1: every kind reaches every operation),
// FUZZ_TIMEOUT_MS per request (default 60000: password hashing on a loaded 2-core machine took over 15 s), FUZZ_CONCURRENCY operations at once (default 1: at 4, on a loaded machine, writes
// queued behind password hashing left projections more than 10 s behind, and their readers answered 500), FUZZ_OPS a substring of the operations to run
// (`chat POST /api/dms`) to replay one.
//
// In-process through `app.request()`: nothing is skipped. The websocket routes are sent plain
// HTTP requests (their refusals without an upgrade are documented); the upgrade itself needs a
// socket (tests/e2e). Destructive routes run last (deletes deepest path first), and routes that
// end their own principal get a fresh one per request (fuzz/principals.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import { loadDocuments, type Operation, type ServiceDocument } from './fuzz/documents.ts';
import { KINDS } from './fuzz/mutations.ts';
import { buildWorld, fuzzEnv, realResource, type World } from './fuzz/principals.ts';
import { RequestFactory } from './fuzz/requests.ts';
import { ResponseChecker } from './fuzz/responses.ts';
import { Fuzzer, type Finding } from './fuzz/run.ts';
import { startTestApps, type TestServices } from '../support/services.ts';

const seed =
  process.env.FUZZ_SEED === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.FUZZ_SEED ?? 30);
const options = {
  seed,
  valid: Number(process.env.FUZZ_VALID ?? 2),
  rounds: Number(process.env.FUZZ_ROUNDS ?? 1),
  timeoutMs: Number(process.env.FUZZ_TIMEOUT_MS ?? 60_000),
  concurrency: Number(process.env.FUZZ_CONCURRENCY ?? 1),
};

/**
 * Findings known and not fixed yet: the operation (`service METHOD /path`, or `(no request)` for a
 * log line of no request), optionally the mutation kind and a pattern of the problem, and why.
 * A finding listed here is printed, not failed on. Remove an entry once its fix lands.
 */
const KNOWN: Array<{ op: string; kind?: string; problem?: RegExp; reason: string }> = [];

const known = (f: Finding) =>
  KNOWN.find(
    (k) =>
      k.op === f.op &&
      (k.kind === undefined || k.kind === f.kind) &&
      (k.problem === undefined || k.problem.test(f.problem)),
  );

/** Run order: reads, then writes, then deletes (deepest path first), then the routes that start releases. */
function phase(op: Operation): number {
  if (/\/updates\/apply$/.test(op.path) && op.method === 'POST') return 4;
  if (op.method === 'GET' || op.method === 'HEAD') return 0;
  if (op.method === 'DELETE') return 2;
  return 1;
}
const ordered = (ops: Operation[]) =>
  [...ops].sort(
    (a, b) => phase(a) - phase(b) || (phase(a) === 2 ? b.path.split('/').length - a.path.split('/').length : 0),
  );

const test = suite<{ s: TestServices; dir: string; world: World; documents: ServiceDocument[]; fuzzer: Fuzzer }>(
  'OpenAPI fuzz',
);

test.before(async (ctx) => {
  const t0 = Date.now();
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-fuzz-'));
  ctx.s = await startTestApps('openapi_fuzz', await fuzzEnv(ctx.dir));
  ctx.world = await buildWorld(ctx.s);
  ctx.documents = loadDocuments(ctx.s.platform);
  const factory = new RequestFactory(ctx.documents, (op, name) => realResource(ctx.world, op, name));
  ctx.fuzzer = new Fuzzer(ctx.world, ctx.documents, factory, new ResponseChecker(ctx.documents), options);
  console.log(
    `openapi fuzz: world and documents in ${((Date.now() - t0) / 1000).toFixed(1)} s; FUZZ_SEED=${seed} valid=${options.valid} rounds=${options.rounds} kinds=${KINDS.join(',')}`,
  );
});
test.after(async ({ s, dir }) => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

for (const service of ['orch', 'chat', 'registry'] as const) {
  test(`${service}: every operation answers as its document says, valid and mutated requests alike`, async ({
    documents,
    fuzzer,
  }) => {
    const filter = process.env.FUZZ_OPS;
    // Seeds follow each operation's place in the whole ordered list, so a filtered run replays the same requests.
    const all = ordered(documents.find((d) => d.service === service)!.operations);
    const ops = all.filter((op) => !filter || op.key.includes(filter));
    const started = Date.now();
    const before = { sent: fuzzer.sent, findings: fuzzer.findings.length };
    const slowest: Array<[string, number]> = [];
    // Operations of one phase run `concurrency` at a time; phases one after the other.
    for (const p of [...new Set(ops.map(phase))]) {
      const queue = ops.map((op) => [op, all.indexOf(op)] as const).filter(([op]) => phase(op) === p);
      await Promise.all(
        Array.from({ length: options.concurrency }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) {
            const t = Date.now();
            await fuzzer.operation(next[0], next[1]);
            slowest.push([next[0].key, Date.now() - t]);
          }
        }),
      );
    }
    slowest.sort((a, b) => b[1] - a[1]);
    const findings = [...fuzzer.findings.slice(before.findings), ...fuzzer.unattributed()];
    const fresh = findings.filter((f) => !known(f));
    console.log(
      `${service}: ${ops.length} operations, ${fuzzer.sent - before.sent} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ${fresh.length} findings, ${findings.length - fresh.length} known; slowest: ${slowest
        .slice(0, 5)
        .map(([k, ms]) => `${k} ${(ms / 1000).toFixed(1)} s`)
        .join(', ')}`,
    );
    if (fresh.length > 0) {
      const byOp = new Map<string, Finding[]>();
      for (const f of fresh) byOp.set(f.op, [...(byOp.get(f.op) ?? []), f]);
      const lines = [...byOp.entries()].map(
        ([op, list]) =>
          `${op} (${list.length}):\n${list
            .slice(0, 2)
            .map((f) => `  [${f.kind}] ${f.problem}\n    replay: ${f.replay}`)
            .join('\n')}`,
      );
      throw new Error(
        `FUZZ_SEED=${seed}: ${fresh.length} findings on ${byOp.size} operations of ${service}\n${lines.join('\n')}`,
      );
    }
  });
}

test.run();
