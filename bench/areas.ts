// The bench's figure areas, run one after another: an area that fails (a server refusing
// connections, a service that did not start) is named with its error, and the run goes on with
// the others, so one broken figure does not take every other figure of the run with it; the
// caller exits non-zero when any failed.

export interface Area {
  /** How progress and the failure summary name it, and what BENCH_AREAS filters on. */
  name: string;
  run(): Promise<void>;
}

export interface AreaOutcome {
  failed: { name: string; error: string }[];
  ran: string[];
}

/**
 * Run `areas` in order (only those whose name contains one of `only`, when given), each to
 * its end or its failure; never throws.
 */
export async function runAreas(
  areas: Area[],
  progress: (message: string) => void,
  only: string[] = [],
): Promise<AreaOutcome> {
  const outcome: AreaOutcome = { failed: [], ran: [] };
  for (const area of areas) {
    if (only.length > 0 && !only.some((word) => area.name.includes(word))) continue;
    outcome.ran.push(area.name);
    try {
      await area.run();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      outcome.failed.push({ name: area.name, error: message });
      progress(`FAILED ${area.name}: ${message}; going on with the other figures`);
    }
  }
  return outcome;
}

/** BENCH_AREAS: a comma-separated list of words; only areas whose name holds one of them run. */
export function areaFilter(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);
}
