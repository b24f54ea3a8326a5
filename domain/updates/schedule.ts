// When the update check runs: at startup, then every interval plus a random 0-10% (so a fleet
// does not hit the manifest host in step). `ORCH_UPDATES_CHECK_INTERVAL_SECS`: default 21600
// (6 hours), values under 900 raised to 900, `off` or `0` turns the background check off, any
// other value refuses the start.

export const DEFAULT_CHECK_INTERVAL_SECS = 21_600;
export const MIN_CHECK_INTERVAL_SECS = 900;
export const MAX_JITTER = 0.1;

export interface CheckSchedule {
  background: boolean;
  /** The effective interval (after the floor); the default when background checks are off. */
  intervalSecs: number;
}

/** The interval's value; a bad one throws `expected ...` (the configuration names the variable). */
export function parseCheckInterval(value: string | undefined): CheckSchedule {
  const text = (value ?? '').trim().toLowerCase();
  if (text === '') return { background: true, intervalSecs: DEFAULT_CHECK_INTERVAL_SECS };
  if (text === 'off' || text === '0') return { background: false, intervalSecs: DEFAULT_CHECK_INTERVAL_SECS };
  if (!/^\d+$/.test(text)) throw new Error(`expected a number of seconds, 0 or off, got ${JSON.stringify(value)}`);
  return { background: true, intervalSecs: Math.max(MIN_CHECK_INTERVAL_SECS, Number(text)) };
}

/** The delay before the next check: the interval plus `random` (0 ≤ random < 1) × 10% of it. */
export function nextCheckDelayMs(schedule: CheckSchedule, random: number): number {
  return Math.round(schedule.intervalSecs * 1000 * (1 + MAX_JITTER * Math.min(Math.max(random, 0), 1)));
}
