// A generic throughput harness: run N workers in closed loops for a fixed time and count the
// units (rows, events) they complete. Every figure in the bench goes through it, so baselines
// and the figures compared with them are measured the same way.
//
// Why time-boxed rather than "N operations": the whole bench must stay well under two minutes
// on any machine, and a fixed window makes slow and fast figures cost the same.
// Why a warm-up: the first operations pay for connection setup, plan caching, catalog and
// buffer-cache misses; counting them would understate steady-state throughput.
// Why `paired`: a ratio of two figures measured seconds apart is at the mercy of whatever else
// the machine does in between (CI neighbours, autovacuum, a checkpoint). Alternating short
// slices of the two workloads exposes both to the same background, so the ratio holds still
// even when the absolute figures move.

import { performance } from 'node:perf_hooks';

/** One operation of a worker; resolves to the units it completed (1 row, 100 events, ...). */
export type Operation = () => Promise<number>;

export interface Throughput {
  /** Units per second over the measured time. */
  perSecond: number;
  units: number;
  operations: number;
  /** Mean latency of one operation (ms), from the worker count and the measured time. */
  meanLatencyMs: number;
}

interface Counted {
  units: number;
  operations: number;
  ms: number;
}

/**
 * Run every operation in its own closed loop (one worker each) for `warmupMs + measureMs`.
 * Units of operations completing inside the measured window count; operations still in
 * flight at its end are awaited but not counted.
 */
async function run(operations: Operation[], warmupMs: number, measureMs: number): Promise<Counted> {
  const windowStart = performance.now() + warmupMs;
  const windowEnd = windowStart + measureMs;
  let units = 0;
  let count = 0;
  await Promise.all(
    operations.map(async (operation) => {
      while (performance.now() < windowEnd) {
        const done = await operation();
        const now = performance.now();
        if (now >= windowStart && now < windowEnd) {
          units += done;
          count += 1;
        }
      }
    }),
  );
  return { units, operations: count, ms: measureMs };
}

function summarise(workers: number, counted: Counted): Throughput {
  return {
    perSecond: counted.units / (counted.ms / 1000),
    units: counted.units,
    operations: counted.operations,
    meanLatencyMs: counted.operations > 0 ? (workers * counted.ms) / counted.operations : Number.NaN,
  };
}

/** `operations.length` workers for `warmupMs`, then counted for `measureMs`. */
export async function throughput(
  operations: Operation[],
  timing: { warmupMs: number; measureMs: number },
): Promise<Throughput> {
  return summarise(operations.length, await run(operations, timing.warmupMs, timing.measureMs));
}

/**
 * Two workloads measured in alternating slices (a, b, a, b, ...) after one warm-up each, so
 * both see the same background load; each gets `measureMs` in total.
 */
export async function paired(
  a: Operation[],
  b: Operation[],
  timing: { warmupMs: number; measureMs: number; slices: number },
): Promise<[Throughput, Throughput]> {
  await run(a, timing.warmupMs, 0);
  await run(b, timing.warmupMs, 0);
  const sliceMs = timing.measureMs / timing.slices;
  const totals: [Counted, Counted] = [
    { units: 0, operations: 0, ms: 0 },
    { units: 0, operations: 0, ms: 0 },
  ];
  for (let slice = 0; slice < timing.slices; slice++) {
    for (const [side, operations] of [
      [0, a],
      [1, b],
    ] as const) {
      const counted = await run(operations, 0, sliceMs);
      totals[side].units += counted.units;
      totals[side].operations += counted.operations;
      totals[side].ms += counted.ms;
    }
  }
  return [summarise(a.length, totals[0]), summarise(b.length, totals[1])];
}

/** Wall-clock time of one piece of work, in seconds. */
export async function timed<T>(work: () => Promise<T>): Promise<{ result: T; seconds: number }> {
  const begin = performance.now();
  const result = await work();
  return { result, seconds: (performance.now() - begin) / 1000 };
}
