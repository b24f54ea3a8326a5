// The status frames of `/ws/live`: service health, projection lag, agents and tasks by status,
// chat turns per minute. Counts and names only: no message body, no user data. One snapshot is
// computed per interval for every socket of the instance, and only while any is open.
// Agents and tasks by status, and chat turns (model replies) in the last minute, come from those
// slices' read models.

import { readCheckpoints } from '../../../infra/processors/projection.ts';
import { Ticker } from '../../../infra/ticker.ts';
import { mapLimit } from '../../../infra/scheduler/scheduler.ts';
import { allProjections } from '../../../projections/index.ts';
import { chatTurnsSince } from '../../../projections/orchestration/agent-chat.ts';
import { agentCountsByStatus } from '../../../projections/orchestration/agents.ts';
import { taskCountsByStatus } from '../../../projections/orchestration/tasks.ts';
import type { OrchDeps } from '../deps.ts';
import type { StatusFrame } from './status-frame.ts';

export const LAG_CAP = 100_000;
const LAG_CONCURRENCY = 8;

export type { StatusFrame };

type StatusDeps = Pick<OrchDeps, 'db' | 'events' | 'version' | 'clock'>;

export async function statusSnapshot(deps: StatusDeps): Promise<StatusFrame> {
  const frame: StatusFrame = {
    type: 'status',
    at: deps.clock.now().toISOString(),
    service: { status: 'ok', version: deps.version, database: 'ok' },
    projections: {},
    agents_by_status: {},
    tasks_by_status: {},
    chat_turns_per_minute: 0,
  };
  try {
    const checkpoints = await readCheckpoints(deps.db);
    // Several counts at once: each is a round trip or two to the log (a subscription on EventStoreDB).
    const lags = new Map<string, number>();
    await mapLimit(allProjections, LAG_CONCURRENCY, async (p) => {
      lags.set(
        p.name,
        await deps.events.countAfter(checkpoints.get(p.name) ?? 'start', { eventTypes: [...p.handles] }, LAG_CAP),
      );
    });
    for (const p of allProjections) frame.projections[p.name] = { lag_events: lags.get(p.name)! };
    [frame.agents_by_status, frame.tasks_by_status, frame.chat_turns_per_minute] = await Promise.all([
      agentCountsByStatus(deps.db),
      taskCountsByStatus(deps.db),
      chatTurnsSince(deps.db, new Date(deps.clock.now().getTime() - 60_000)),
    ]);
  } catch {
    frame.service = { ...frame.service, status: 'degraded', database: 'unreachable' };
  }
  return frame;
}

/** Ticks while sockets listen (each socket holds the ticker, infra/ticker.ts): one snapshot per interval, shared. */
export class LiveStatus {
  private readonly listeners = new Set<(frame: string) => void>();
  private readonly ticker: Ticker;
  private last: string | null = null;

  constructor(
    private readonly deps: StatusDeps,
    intervalMs: number,
  ) {
    this.ticker = new Ticker(intervalMs, () => void this.tick());
  }

  /** Sends the latest frame now (or the first once computed), then one per interval. */
  listen(send: (frame: string) => void): () => void {
    this.listeners.add(send);
    if (this.last) send(this.last);
    const first = !this.ticker.running;
    const release = this.ticker.hold();
    if (first) void this.tick();
    return () => {
      this.listeners.delete(send);
      release();
      if (!this.ticker.running) this.last = null;
    };
  }

  private async tick(): Promise<void> {
    const frame = JSON.stringify(await statusSnapshot(this.deps));
    if (!this.ticker.running) return;
    this.last = frame;
    for (const send of this.listeners) send(frame);
  }
}
