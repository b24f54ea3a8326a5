// Prometheus metrics (prom-client), one registry per opened platform (tests open several in one
// process): HTTP requests by service, route pattern and status; events appended by type; each
// processor's (projection's or reactor's) checkpoint, lag behind the head of the log and last
// error; process metrics. Processor figures are read when scraped, from the database every
// instance shares.

import client from 'prom-client';
import type { DomainEvent } from '../domain/shared/decider.ts';
import type { EventStore } from './eventstore/port.ts';
import type { Pool } from './db/pool.ts';
import type { Position } from './eventstore/position.ts';
import type { Processor, ProcessorEngine } from './processors/engine.ts';
import { inEachProcess, readReactorCheckpoints } from './processors/reactor.ts';
import { readCheckpoints } from './processors/projection.ts';
import { mapLimit } from './scheduler/scheduler.ts';

/** A processor further behind than this reports this figure (the count stops there). */
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
    this.requests = new client.Counter({
      name: 'orchard_http_requests_total',
      help: 'HTTP requests answered',
      labelNames,
      registers: [this.registry],
    });
    this.duration = new client.Histogram({
      name: 'orchard_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames,
      registers: [this.registry],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    });
    this.chatsvcFailures = new client.Counter({
      name: 'orchard_chatsvc_bot_failures_total',
      help: 'Chat-service bot messages that failed inside the connector (nothing was sent)',
      labelNames: ['kind'],
      registers: [this.registry],
    });
    this.appended = new client.Counter({
      name: 'orchard_events_appended_total',
      help: 'Events appended to the log by this process',
      labelNames: ['type'],
      registers: [this.registry],
    });
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

  /**
   * Every processor's series, computed at scrape time: the projections under `orchard_projection_*`
   * (label `projection`), the reactors under the sibling `orchard_reactor_*` (label `reactor`),
   * the same six figures each (a reactor of scope each: its position in this process, active
   * while it runs here). Reactors register when their service starts, so the lists are
   * read at each scrape.
   */
  watchProcessors(engine: ProcessorEngine, store: EventStore, pool: Pool): void {
    this.processorSeries(
      'projection',
      () => engine.projections,
      () => readCheckpoints(pool),
      engine,
      store,
    );
    this.processorSeries(
      'reactor',
      () => engine.reactors,
      async () => {
        const at = await readReactorCheckpoints(pool);
        // A reactor of scope each keeps no stored checkpoint: its position is this process's.
        for (const { name } of engine.reactors.filter(inEachProcess)) {
          const position = engine.position(name);
          if (position) at.set(name, position);
          else at.delete(name);
        }
        return at;
      },
      engine,
      store,
    );
  }

  private processorSeries(
    kind: 'projection' | 'reactor',
    processors: () => readonly Processor[],
    checkpoints: () => Promise<Map<string, Position>>,
    engine: ProcessorEngine,
    store: EventStore,
  ): void {
    const registers = [this.registry];
    const labelNames = [kind] as const;
    const label = (name: string) => ({ [kind]: name });
    new client.Gauge({
      name: `orchard_${kind}_checkpoint_position`,
      help: `Log position the ${kind} has ${kind === 'projection' ? 'applied' : 'acted on'} (commit and prepare parts)`,
      labelNames: [kind, 'part'],
      registers,
      async collect() {
        this.reset();
        const at = await checkpoints();
        for (const p of processors()) {
          this.set({ ...label(p.name), part: 'commit' }, Number(at.get(p.name)?.commit ?? 0n));
          this.set({ ...label(p.name), part: 'prepare' }, Number(at.get(p.name)?.prepare ?? 0n));
        }
      },
    });
    new client.Gauge({
      name: `orchard_${kind}_lag_events`,
      help: `Events of the ${kind}'s types behind the head of the log (counted up to ${LAG_CAP})`,
      labelNames,
      registers,
      async collect() {
        this.reset();
        const at = await checkpoints();
        // Several counts at once (each a round trip or two to the log), then set in a stable order.
        const lags = new Map<string, number>();
        await mapLimit([...processors()], 8, async (p) => {
          lags.set(p.name, await store.countAfter(at.get(p.name) ?? 'start', { eventTypes: [...p.handles] }, LAG_CAP));
        });
        for (const p of processors()) this.set(label(p.name), lags.get(p.name)!);
      },
    });
    new client.Gauge({
      name: `orchard_${kind}_active`,
      help: `1 when this process runs the ${kind} (holds its lock)`,
      labelNames,
      registers,
      collect() {
        for (const p of processors()) this.set(label(p.name), engine.isActive(p.name) ? 1 : 0);
      },
    });
    new client.Gauge({
      name: `orchard_${kind}_errors_total`,
      help: `Failed batches of the ${kind} in this process`,
      labelNames,
      registers,
      collect() {
        for (const p of processors()) this.set(label(p.name), engine.health(p.name).errors);
      },
    });
    new client.Gauge({
      name: `orchard_${kind}_last_error_timestamp_seconds`,
      help: `When the ${kind} last failed in this process (0: never)`,
      labelNames,
      registers,
      collect() {
        for (const p of processors())
          this.set(label(p.name), (engine.health(p.name).lastErrorAt?.getTime() ?? 0) / 1000);
      },
    });
    new client.Gauge({
      name: `orchard_${kind}_last_error_info`,
      help: `The last error of the ${kind} in this process (1 while one is known)`,
      labelNames: [kind, 'error'],
      registers,
      collect() {
        this.reset();
        for (const p of processors()) {
          const { lastError } = engine.health(p.name);
          if (lastError) this.set({ ...label(p.name), error: lastError.slice(0, 200) }, 1);
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
