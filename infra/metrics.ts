// Prometheus metrics (prom-client), one registry per opened platform (tests open several in one
// process): HTTP requests by service, route pattern and status; events appended by type; each
// projection's checkpoint, lag behind the head of the log and last error; process metrics.
// Projection figures are read when scraped, from the database every instance shares.

import client from 'prom-client';
import type { DomainEvent } from '../domain/shared/decider.ts';
import type { EventStore } from './eventstore/port.ts';
import type { Pool } from './db/pool.ts';
import { readCheckpoints, type ProjectionEngine } from './projections/engine.ts';
import { mapLimit } from './scheduler/scheduler.ts';

/** A projection further behind than this reports this figure (the count stops there). */
export const LAG_CAP = 100_000;

export class Metrics {
  readonly registry = new client.Registry();
  private readonly requests: client.Counter<'service' | 'method' | 'route' | 'status'>;
  private readonly duration: client.Histogram<'service' | 'method' | 'route' | 'status'>;
  private readonly appended: client.Counter<'type'>;
  private readonly chatsvcFailures: client.Counter<'kind'>;

  constructor() {
    // The process and runtime series keep their standard names (process_*, nodejs_*): the stock
    // Node.js dashboards and alerts expect them. Only our own series carry the orchard_ prefix.
    client.collectDefaultMetrics({ register: this.registry });
    const labelNames = ['service', 'method', 'route', 'status'] as const;
    this.requests = new client.Counter({ name: 'orchard_http_requests_total', help: 'HTTP requests answered', labelNames, registers: [this.registry] });
    this.duration = new client.Histogram({
      name: 'orchard_http_request_duration_seconds', help: 'HTTP request latency', labelNames, registers: [this.registry],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.chatsvcFailures = new client.Counter({
      name: 'orchard_chatsvc_bot_failures_total', help: 'Chat-service bot messages that failed inside the connector (nothing was sent)', labelNames: ['kind'], registers: [this.registry],
    });
    this.appended = new client.Counter({ name: 'orchard_events_appended_total', help: 'Events appended to the log by this process', labelNames: ['type'], registers: [this.registry] });
  }

  observeRequest(labels: { service: string; method: string; route: string; status: number }, seconds: number): void {
    const l = { ...labels, status: String(labels.status) };
    this.requests.inc(l);
    this.duration.observe(l, seconds);
  }

  /** A bot message the connector dropped on an internal error (`frame`, `answer`). */
  countChatsvcFailure(kind: string): void {
    this.chatsvcFailures.inc({ kind });
  }

  countAppended(events: DomainEvent[]): void {
    for (const e of events) this.appended.inc({ type: e.type });
  }

  /** Projection series, computed at scrape time. */
  watchProjections(engine: ProjectionEngine, store: EventStore, pool: Pool): void {
    const registers = [this.registry];
    const labelNames = ['projection'] as const;
    new client.Gauge({
      name: 'orchard_projection_checkpoint_position', help: 'Log position the projection has applied (commit and prepare parts)',
      labelNames: ['projection', 'part'], registers,
      async collect() {
        this.reset();
        const checkpoints = await readCheckpoints(pool);
        for (const p of engine.projections) {
          const at = checkpoints.get(p.name);
          this.set({ projection: p.name, part: 'commit' }, Number(at?.commit ?? 0n));
          this.set({ projection: p.name, part: 'prepare' }, Number(at?.prepare ?? 0n));
        }
      },
    });
    new client.Gauge({
      name: 'orchard_projection_lag_events', help: `Events of the projection's types behind the head of the log (counted up to ${LAG_CAP})`,
      labelNames, registers,
      async collect() {
        this.reset();
        const checkpoints = await readCheckpoints(pool);
        // Several counts at once (each a round trip or two to the log), then set in a stable order.
        const lags = new Map<string, number>();
        await mapLimit(engine.projections, 8, async (p) => {
          lags.set(p.name, await store.countAfter(checkpoints.get(p.name) ?? 'start', { eventTypes: [...p.handles] }, LAG_CAP));
        });
        for (const p of engine.projections) this.set({ projection: p.name }, lags.get(p.name)!);
      },
    });
    new client.Gauge({
      name: 'orchard_projection_active', help: '1 when this process runs the projection (holds its lock)', labelNames, registers,
      collect() {
        for (const p of engine.projections) this.set({ projection: p.name }, engine.isActive(p.name) ? 1 : 0);
      },
    });
    new client.Gauge({
      name: 'orchard_projection_errors_total', help: 'Failed batches of the projection in this process', labelNames, registers,
      collect() {
        for (const p of engine.projections) this.set({ projection: p.name }, engine.health(p.name).errors);
      },
    });
    new client.Gauge({
      name: 'orchard_projection_last_error_timestamp_seconds', help: 'When the projection last failed in this process (0: never)', labelNames, registers,
      collect() {
        for (const p of engine.projections) this.set({ projection: p.name }, (engine.health(p.name).lastErrorAt?.getTime() ?? 0) / 1000);
      },
    });
    new client.Gauge({
      name: 'orchard_projection_last_error_info', help: 'The last error of the projection in this process (1 while one is known)',
      labelNames: ['projection', 'error'], registers,
      collect() {
        this.reset();
        for (const p of engine.projections) {
          const { lastError } = engine.health(p.name);
          if (lastError) this.set({ projection: p.name, error: lastError.slice(0, 200) }, 1);
        }
      },
    });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
