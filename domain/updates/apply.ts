// The managed-update apply as the sidecar runs it: twelve in-progress states in four phases, the
// terminal states, and the summary folded from an apply's journal entries. Pure: the executor
// (infra/updater/) does the I/O and journals each step; this file says what the steps mean.

export const PHASES = {
  verifying_manifest: 'pre_flight',
  announcing_maintenance: 'pre_flight',
  snapshotting: 'pre_flight',
  pulling: 'pre_flight',
  verifying_digest: 'pre_flight',
  draining: 'active_swap',
  migrating: 'active_swap',
  recreating: 'active_swap',
  health_checking: 'verifying',
  checking_delivery: 'verifying',
  restoring_snapshot: 'rollback',
  restarting_prior: 'rollback',
} as const;

export type RunningState = keyof typeof PHASES;
export type Phase = (typeof PHASES)[RunningState];
export const RUNNING_STATES = Object.keys(PHASES) as RunningState[];

/**
 * `succeeded` (outcome success or delivery_incomplete), `failed` (a pre-flight failure: nothing
 * touched, outcome null), `rolled_back`, `recovered` (rolled back after the sidecar was
 * interrupted mid-swap), `frozen` (the restore failed: maintenance stays until unfrozen).
 */
export const TERMINAL_STATES = ['succeeded', 'failed', 'rolled_back', 'recovered', 'frozen'] as const;
export type TerminalState = (typeof TERMINAL_STATES)[number];
export type ApplyState = RunningState | TerminalState;

export const OUTCOMES = ['success', 'delivery_incomplete', 'rolled_back', 'frozen'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const isTerminal = (state: string): state is TerminalState =>
  (TERMINAL_STATES as readonly string[]).includes(state);
export const phaseOf = (state: string): Phase | null => (PHASES as Record<string, Phase>)[state] ?? null;

/** The swap has begun once the old release is drained: from then on a failure rolls back. */
export const SWAP_STATES: readonly RunningState[] = [
  'draining',
  'migrating',
  'recreating',
  'health_checking',
  'checking_delivery',
];

/** One journaled step. `state` is the apply's state once the step is recorded. */
export interface JournalEntry {
  /** UUID: the id of the event this entry becomes in the log. */
  id: string;
  apply_id: string;
  seq: number;
  type: string;
  state: ApplyState;
  at: string;
  data: Record<string, unknown>;
}

export interface ApplyError {
  code: string;
  message: string;
  /** delivery_incomplete: the requirements that are not present. */
  requirements?: { id: string; status: string; action: string }[];
}

export interface ApplySummary {
  apply_id: string;
  state: ApplyState;
  phase: Phase | null;
  outcome: Outcome | null;
  error: ApplyError | null;
  from_version: string | null;
  to_version: string | null;
  requested_by: string | null;
  source: string | null;
  started_at: string;
  ended_at: string | null;
  /** Set once an operator unfroze a frozen apply. */
  unfrozen_at: string | null;
}

/** Fold an apply's entries (oldest first) into what the routes show. */
export function summarize(entries: JournalEntry[]): ApplySummary {
  const first = entries[0]!;
  const last = entries.at(-1)!;
  const summary: ApplySummary = {
    apply_id: first.apply_id,
    state: last.state,
    phase: phaseOf(last.state),
    outcome: null,
    error: null,
    from_version: (first.data.from_version as string) ?? null,
    to_version: (first.data.to_version as string) ?? null,
    requested_by: (first.data.requested_by as string) ?? null,
    source: (first.data.source as string) ?? null,
    started_at: first.at,
    ended_at: null,
    unfrozen_at: null,
  };
  for (const e of entries) {
    if (e.data.error) summary.error = e.data.error as ApplyError;
    if (e.type === 'apply_completed') {
      summary.outcome = (e.data.outcome as Outcome | null) ?? null;
      summary.ended_at = e.at;
    }
    if (e.type === 'unfrozen') summary.unfrozen_at = e.at;
  }
  return summary;
}

/**
 * What a restarted sidecar does with an apply its journal shows unfinished: before the swap
 * nothing was touched, so it fails (lifting maintenance); from the swap on it rolls back.
 */
export function resumeAction(state: ApplyState): 'none' | 'fail' | 'rollback' {
  if (isTerminal(state)) return 'none';
  if ((SWAP_STATES as readonly string[]).includes(state) || phaseOf(state) === 'rollback') return 'rollback';
  return 'fail';
}
