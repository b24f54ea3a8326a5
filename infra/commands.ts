// The one way to write to the log (DESIGN.md "Commands" and "Slices").
//
// `run(stream, decider, command, ctx)`: load the aggregate's stream, fold it, decide, append
// with the revision read, and retry a bounded number of times when another writer got there
// first (the decision is taken again on the new state, never blindly re-appended). Then wait
// until the projections the events affect have applied them (read-your-writes).
//
// `record(stream, event, ctx)`: append a fact that no decision guards (an audit event), then
// wait the same way.
//
// `runMany(decider, items)`: `run` for many streams at once, appended together (`appendMany`).
//
// `runTogether(parts, ctx)`: several streams, each decided by its own decider, appended in one
// log transaction (all or nothing) where the store allows it (`canRunTogether`).
//
// Nothing else calls `append`.

import { randomUUID } from 'node:crypto';
import type { Decider, DomainEvent } from '../domain/shared/decider.ts';
import type {
  Actor,
  AppendResult,
  EventStore,
  EventToAppend,
  ExpectedRevision,
  RecordedEvent,
  StreamAppend,
  StreamAppendOutcome,
} from './eventstore/port.ts';
import { WrongExpectedRevisionError } from './eventstore/port.ts';
import { schemaVersion, upcast } from './eventstore/upcasters.ts';
import type { Position } from './eventstore/position.ts';
import type { WriteGate } from './updates/write-gate.ts';

export interface CommandContext {
  actor: Actor;
  /** The request id. */
  correlationId: string | null;
  causationId?: string | null;
}

export interface CommandResult<State, Event> {
  events: Event[];
  state: State;
  /** Null when the command produced no events (nothing was appended). */
  appended: AppendResult | null;
}

/** One stream's command for `runMany`; `known` as for `run`. */
export interface RunManyItem<State, Command> {
  stream: string;
  command: Command;
  context: CommandContext;
  known?: { state: State; revision: bigint | 'no_stream' };
}

/** One stream's part of `runTogether`: its decider and its command. Build it with `part` (which checks the command against the decider). */
export interface TogetherPart {
  stream: string;
  decider: Decider<any, any, DomainEvent>;
  command: unknown;
}
export const part = <State, Command, Event extends DomainEvent>(
  stream: string,
  decider: Decider<State, Command, Event>,
  command: Command,
): TogetherPart => ({ stream, decider: decider as unknown as TogetherPart['decider'], command });

export type RunManyOutcome<State, Event> =
  { ok: true; result: CommandResult<State, Event> } | { ok: false; error: unknown };

/** Waits until each projection has applied the last of these events that it handles. */
export type AwaitProjections = (events: { type: string; position: Position }[]) => Promise<void>;

const MAX_ATTEMPTS = 5;

export function toAppend(event: DomainEvent, context: CommandContext): EventToAppend {
  return {
    id: randomUUID(),
    type: event.type,
    data: event.data,
    metadata: {
      actor: context.actor,
      correlation_id: context.correlationId,
      causation_id: context.causationId ?? null,
      schema: schemaVersion(event.type),
    },
  };
}

export function asDomainEvent<Event extends DomainEvent>(recorded: RecordedEvent): Event {
  const current = upcast(recorded);
  return { type: current.type, data: current.data } as Event;
}

export class CommandRunner {
  /** Closed during an update's maintenance: appends are refused with 503 `maintenance` (see write-gate.ts). */
  gate: WriteGate | null = null;

  constructor(
    readonly store: EventStore,
    private readonly waitForProjections: AwaitProjections,
    /** Told of every append (the metrics count events by type). */
    private readonly onAppended: (events: DomainEvent[]) => void = () => {},
  ) {}

  /**
   * `awaitProjections: false` returns once the events are appended, without waiting for the
   * projections: for a use case that appends many streams in a row and then waits once for the
   * last position with `awaitProjections` (a batch ingest), so the projections apply its events
   * in multi-event batches rather than one by one.
   *
   * `known`: the aggregate's state at `revision` as the caller already holds it (from a read
   * model it just read), so a hot path need not read and fold the stream. It is only a hint: the
   * first decision is taken on it and appended with `revision` as the expectation, so the log
   * itself confirms the state was current; when the stream has moved on, or the decision on the
   * hint is a refusal or produces nothing (neither is checked by an append), the runner reads
   * and folds the stream and decides again, as without it.
   */
  async run<State, Command, Event extends DomainEvent>(
    stream: string,
    decider: Decider<State, Command, Event>,
    command: Command,
    context: CommandContext,
    options: { awaitProjections?: boolean; known?: { state: State; revision: bigint | 'no_stream' } } = {},
  ): Promise<CommandResult<State, Event>> {
    let hint = options.known ?? null;
    // The attempt on the hint is attempt 0: the log is still read up to MAX_ATTEMPTS times.
    for (let attempt = hint ? 0 : 1; ; attempt++) {
      const fromHint = hint !== null;
      let state: State;
      let expected: bigint | 'no_stream';
      if (hint) {
        ({ state, revision: expected } = hint);
        hint = null;
      } else {
        const history = await this.store.readStream(stream);
        state = history.map((e) => asDomainEvent<Event>(e)).reduce(decider.evolve, decider.initialState());
        expected = history.at(-1)?.revision ?? 'no_stream';
      }
      let events: Event[];
      try {
        events = decider.decide(command, state);
      } catch (error) {
        if (fromHint) continue;
        throw error;
      }
      if (events.length === 0) {
        if (fromHint) continue;
        return { events, state, appended: null };
      }
      let appended: AppendResult;
      const leave = this.gate?.enter(events.map((e) => e.type));
      try {
        appended = await this.store.append(
          stream,
          events.map((e) => toAppend(e, context)),
          { expected },
        );
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
        continue;
      } finally {
        leave?.();
      }
      this.onAppended(events);
      state = events.reduce(decider.evolve, state);
      if (options.awaitProjections !== false)
        await this.waitForProjections(await this.positionsOf(stream, events, appended));
      return { events, state, appended };
    }
  }

  /** Whether `runTogether` is available: the store appends several streams all or nothing. */
  get canRunTogether(): boolean {
    return this.store.atomicAppendMany;
  }

  /**
   * A use case that spans streams (a reservation and a create): each part is decided by its own
   * decider on its stream as read, and every decision with events is appended by one atomic
   * `appendMany`, so the log holds all of them or none (PostgreSQL: one statement, so a crash
   * cannot split it either). When any stream moved on meanwhile nothing is written, and all parts
   * are read and decided again (bounded retries, as `run`). A refusal by any decider is thrown
   * before anything is appended. Results come per part, in order; then, unless
   * `awaitProjections: false`, one wait for the projections covers every part.
   *
   * Only where `canRunTogether`: elsewhere (EventStoreDB) it throws before appending, and the
   * caller keeps its own way of appending one stream after another.
   */
  async runTogether(
    parts: TogetherPart[],
    context: CommandContext,
    options: { awaitProjections?: boolean } = {},
  ): Promise<CommandResult<unknown, DomainEvent>[]> {
    if (!this.canRunTogether)
      throw new Error('runTogether: this store cannot append several streams in one transaction');
    for (let attempt = 1; ; attempt++) {
      const histories = await this.store.readStreams(parts.map((p) => p.stream));
      const decided = parts.map((p) => {
        const history = histories.get(p.stream) ?? [];
        const state = history.map((e) => asDomainEvent(e)).reduce(p.decider.evolve, p.decider.initialState());
        const events = p.decider.decide(p.command, state);
        return { part: p, state, events, expected: (history.at(-1)?.revision ?? 'no_stream') as ExpectedRevision };
      });
      const writing = decided.filter((d) => d.events.length > 0);
      let outcomes: StreamAppendOutcome[] = [];
      if (writing.length) {
        const leave = this.gate?.enter(writing.flatMap((d) => d.events.map((e) => e.type)));
        try {
          outcomes = await this.store.appendMany(
            writing.map((d) => ({
              stream: d.part.stream,
              events: d.events.map((e) => toAppend(e, context)),
              expected: d.expected,
            })),
            { atomic: true },
          );
        } catch (error) {
          if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_ATTEMPTS) throw error;
          continue;
        } finally {
          leave?.();
        }
      }
      const results = decided.map((d) => {
        const i = writing.indexOf(d);
        const appended = i < 0 ? null : (outcomes[i] as { ok: true; result: AppendResult }).result;
        if (appended) this.onAppended(d.events);
        return { events: d.events, state: d.events.reduce(d.part.decider.evolve, d.state), appended };
      });
      if (options.awaitProjections !== false && writing.length) {
        const positions = await Promise.all(
          results
            .filter((r) => r.appended)
            .map((r, i) => this.positionsOf(writing[i]!.part.stream, r.events, r.appended!)),
        );
        await this.waitForProjections(positions.flat());
      }
      return results;
    }
  }

  /**
   * `run` over many streams of one decider at once (a scheduler firing a claimed batch): each
   * item is decided on its `known` hint, else on its stream as read, and every decision with
   * events is appended by one `appendMany`, so the batch is one log transaction on PostgreSQL
   * instead of one per stream, each stream still guarded by its own expectation. An item whose
   * append conflicts, or whose hint was refused or decided nothing, goes through `run` alone
   * (read, decide again, bounded retries), exactly as it would have without the batch. Outcomes
   * come per item, in order; errors are outcomes, not thrown. With `awaitProjections` (default),
   * one wait covers every item.
   *
   * When `appendMany` fails outright, the store may have written none of the streams (PostgreSQL:
   * one statement) or some of them (EventStoreDB: a sequence of appends that stopped half way).
   * Each item then settles on its own stream: when its events stand there (by id, where its
   * expectation put them) it was appended by this call, and says so; otherwise it is decided again
   * on the stream as it is and appended alone. So every decision takes effect at most once, the
   * streams the failure left unwritten are completed when the store allows, and one stream the
   * store refuses fails only its own item.
   */
  async runMany<State, Command, Event extends DomainEvent>(
    decider: Decider<State, Command, Event>,
    items: RunManyItem<State, Command>[],
    options: { awaitProjections?: boolean } = {},
  ): Promise<RunManyOutcome<State, Event>[]> {
    const outcomes: (RunManyOutcome<State, Event> | undefined)[] = new Array(items.length);
    const alone: number[] = [];
    const decided: { index: number; state: State; expected: bigint | 'no_stream'; events: Event[] }[] = [];
    await Promise.all(
      items.map(async (item, index) => {
        const fromHint = item.known !== undefined;
        try {
          let state: State;
          let expected: bigint | 'no_stream';
          if (item.known) {
            ({ state, revision: expected } = item.known);
          } else {
            const history = await this.store.readStream(item.stream);
            state = history.map((e) => asDomainEvent<Event>(e)).reduce(decider.evolve, decider.initialState());
            expected = history.at(-1)?.revision ?? 'no_stream';
          }
          const events = decider.decide(item.command, state);
          if (events.length) decided.push({ index, state, expected, events });
          else if (fromHint) alone.push(index);
          else outcomes[index] = { ok: true, result: { events, state, appended: null } };
        } catch (error) {
          if (fromHint) alone.push(index);
          else outcomes[index] = { ok: false, error };
        }
      }),
    );
    decided.sort((a, b) => a.index - b.index);
    const written: { type: string; position: Position }[] = [];
    const settle = async (d: (typeof decided)[number], result: AppendResult) => {
      this.onAppended(d.events);
      outcomes[d.index] = {
        ok: true,
        result: { events: d.events, state: d.events.reduce(decider.evolve, d.state), appended: result },
      };
      written.push(...(await this.positionsOf(items[d.index]!.stream, d.events, result)));
    };
    /** Items whose batch failed outright: each read back, its own events found or it is run alone on the stream as read. */
    const unsettled: { d: (typeof decided)[number]; append: StreamAppend }[] = [];
    if (decided.length) {
      const appends = decided.map((d) => ({
        stream: items[d.index]!.stream,
        expected: d.expected,
        events: d.events.map((e) => toAppend(e, items[d.index]!.context)),
      }));
      const leave = this.gate?.enter([...new Set(decided.flatMap((d) => d.events.map((e) => e.type)))]);
      let appended: StreamAppendOutcome[] | null = null;
      try {
        appended = await this.store.appendMany(appends);
      } catch {
        unsettled.push(...decided.map((d, i) => ({ d, append: appends[i]! })));
      } finally {
        leave?.();
      }
      for (const [i, d] of (appended ? decided : []).entries()) {
        const outcome = appended![i]!;
        if (outcome.ok) await settle(d, outcome.result);
        else alone.push(d.index);
      }
    }
    const runAlone = async (index: number, known?: { state: State; revision: bigint | 'no_stream' }) => {
      const item = items[index]!;
      try {
        const result = await this.run(item.stream, decider, item.command, item.context, {
          awaitProjections: false,
          known,
        });
        outcomes[index] = { ok: true, result };
        if (result.appended) written.push(...(await this.positionsOf(item.stream, result.events, result.appended)));
      } catch (error) {
        outcomes[index] = { ok: false, error };
      }
    };
    await Promise.all([
      ...alone.map((index) => runAlone(index)),
      ...unsettled.map(async ({ d, append }) => {
        let history: RecordedEvent[];
        try {
          history = await this.store.readStream(append.stream);
        } catch (error) {
          outcomes[d.index] = { ok: false, error };
          return;
        }
        const mine = ownAppend(history, append);
        if (mine) return settle(d, mine);
        const state = history.map((e) => asDomainEvent<Event>(e)).reduce(decider.evolve, decider.initialState());
        await runAlone(d.index, { state, revision: history.at(-1)?.revision ?? 'no_stream' });
      }),
    ]);
    if (options.awaitProjections !== false && written.length) await this.waitForProjections(written);
    return outcomes as RunManyOutcome<State, Event>[];
  }

  async record(
    stream: string,
    event: DomainEvent,
    context: CommandContext,
    options: { expected?: ExpectedRevision } = {},
  ): Promise<AppendResult> {
    const leave = this.gate?.enter([event.type]);
    let appended: AppendResult;
    try {
      appended = await this.store.append(stream, [toAppend(event, context)], { expected: options.expected ?? 'any' });
    } finally {
      leave?.();
    }
    this.onAppended([event]);
    await this.waitForProjections([{ type: event.type, position: appended.position }]);
    return appended;
  }

  /** Read-your-writes for appends made with `awaitProjections: false`: every projection handling `eventTypes` reaches `position`. */
  async awaitProjections(position: Position, eventTypes: string[]): Promise<void> {
    await this.waitForProjections(eventTypes.map((type) => ({ type, position })));
  }

  /**
   * Where each appended event landed. The append answers with the last one's position; events of
   * one type need nothing more, a mixed append takes each event's position from the store's
   * answer when it gives them (PostgreSQL does), else reads its own events back (one short read).
   */
  private async positionsOf(
    stream: string,
    events: DomainEvent[],
    appended: AppendResult,
  ): Promise<{ type: string; position: Position }[]> {
    const last = events.at(-1)!;
    if (events.every((e) => e.type === last.type)) return [{ type: last.type, position: appended.position }];
    if (appended.positions?.length === events.length)
      return events.map((e, i) => ({ type: e.type, position: appended.positions![i]! }));
    const from = appended.nextExpectedRevision - BigInt(events.length - 1);
    const written = await this.store.readStream(stream, { from, limit: events.length });
    return written.map((e) => ({ type: e.type, position: e.position }));
  }
}

/**
 * The append as the stream holds it, when every one of its events stands where its expectation
 * put them (the ids match, in order): a failed call that wrote this stream before it failed.
 */
function ownAppend(history: RecordedEvent[], append: StreamAppend): AppendResult | null {
  const first =
    append.expected === 'no_stream' ? 0 : typeof append.expected === 'bigint' ? Number(append.expected) + 1 : -1;
  if (first < 0) return null;
  const mine = history.slice(first, first + append.events.length);
  if (
    mine.length !== append.events.length ||
    mine.some((e, i) => e.id.toLowerCase() !== append.events[i]!.id.toLowerCase())
  )
    return null;
  return {
    nextExpectedRevision: mine.at(-1)!.revision,
    position: mine.at(-1)!.position,
    positions: mine.map((e) => e.position),
  };
}
