// The log's contract: one suite, run against every adapter (see eventstore.*.test.ts).

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type {
  EventStore,
  EventToAppend,
  ExpectedRevision,
  LogFilter,
  RecordedEvent,
  Subscription,
} from '../../infra/eventstore/port.ts';
import { WrongExpectedRevisionError } from '../../infra/eventstore/port.ts';
import { comparePositions, formatPosition, parsePosition } from '../../infra/eventstore/position.ts';
import { chainHash, generateSigningSeedHex, GENESIS_HASH, signingKeyFromSeed } from '../../crypto/audit.ts';
import { Chainer, entryJsonOf } from '../../infra/audit/chainer.ts';
import { ChainStore } from '../../infra/audit/chain-store.ts';
import { auditItems } from '../../infra/audit/export.ts';
import { ChainVerifier } from '../../infra/audit/verify.ts';
import { systemClock } from '../../infra/clock.ts';
import { createLogger } from '../../infra/logging.ts';
import { freshDatabase } from '../support/database.ts';

export interface ContractTarget {
  store: EventStore;
  cleanup(): Promise<void>;
}

export function event(type = 'ThingHappened', data: Record<string, unknown> = {}): EventToAppend {
  return {
    id: randomUUID(),
    type,
    data,
    metadata: { actor: { kind: 'system', id: null }, correlation_id: randomUUID(), causation_id: null, schema: 1 },
  };
}

const streamName = (category = 'contract') => `${category}-${randomUUID()}`;

async function conflict(promise: Promise<unknown>): Promise<WrongExpectedRevisionError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WrongExpectedRevisionError) return error;
    throw error;
  }
  assert.unreachable('expected a WrongExpectedRevisionError');
  throw new Error('unreachable');
}

/** Collect `count` events from a subscription, failing after `ms`. */
export async function take(sub: Subscription, count: number, ms = 5000): Promise<RecordedEvent[]> {
  const got: RecordedEvent[] = [];
  if (count === 0) return got;
  const timer = setTimeout(() => void sub.close(), ms);
  for await (const e of sub) {
    got.push(e);
    if (got.length >= count) break;
  }
  clearTimeout(timer);
  return got;
}

/** Every event matching `filter`, read page by page (`limit` per page) as a catching-up reader would. */
export async function readAllPages(store: EventStore, filter: LogFilter, limit: number): Promise<RecordedEvent[]> {
  const seen: RecordedEvent[] = [];
  let after;
  for (;;) {
    const page = await store.readAll({ after, filter, limit });
    if (page.length === 0) return seen;
    seen.push(...page);
    after = page.at(-1)!.position;
  }
}

export function eventStoreContract(name: string, make: () => Promise<ContractTarget>): void {
  const test = suite<{ target: ContractTarget; store: EventStore }>(`eventstore contract: ${name}`);
  test.before(async (ctx) => {
    ctx.target = await make();
    ctx.store = ctx.target.store;
  });
  test.after(async (ctx) => {
    await ctx.target?.cleanup();
  });

  test('no_stream: creates a stream at revision 0, then conflicts naming stream, expected and actual', async ({
    store,
  }) => {
    const s = streamName();
    const first = await store.append(s, [event()], { expected: 'no_stream' });
    assert.is(first.nextExpectedRevision, 0n);
    const error = await conflict(store.append(s, [event()], { expected: 'no_stream' }));
    assert.is(error.stream, s);
    assert.is(error.expected, 'no_stream');
    assert.is(error.actual, 0n);
    assert.ok(error.message.includes(s));
  });

  test('exists: conflicts on a missing stream, appends to an existing one', async ({ store }) => {
    const s = streamName();
    const error = await conflict(store.append(s, [event()], { expected: 'exists' }));
    assert.is(error.actual, 'no_stream');
    assert.is(error.expected, 'exists');
    await store.append(s, [event()], { expected: 'any' });
    const result = await store.append(s, [event(), event()], { expected: 'exists' });
    assert.is(result.nextExpectedRevision, 2n);
  });

  test('any: appends whatever the stream holds', async ({ store }) => {
    const s = streamName();
    assert.is((await store.append(s, [event()], { expected: 'any' })).nextExpectedRevision, 0n);
    assert.is((await store.append(s, [event()], { expected: 'any' })).nextExpectedRevision, 1n);
  });

  test('revision: appends only at the exact revision, else conflicts with the actual one', async ({ store }) => {
    const s = streamName();
    await store.append(s, [event(), event(), event()], { expected: 'no_stream' });
    const error = await conflict(store.append(s, [event()], { expected: 1n }));
    assert.is(error.expected, 1n);
    assert.is(error.actual, 2n);
    const missing = await conflict(store.append(streamName(), [event()], { expected: 0n }));
    assert.is(missing.actual, 'no_stream');
    assert.is((await store.append(s, [event()], { expected: 2n })).nextExpectedRevision, 3n);
    assert.is((await store.readStream(s)).length, 4);
  });

  test('expected revision in every form: each refusal names the actual revision and writes nothing', async ({
    store,
  }) => {
    const s = streamName();
    const missing = streamName();
    await store.append(s, [event(), event()], { expected: 'no_stream' });
    const cases: [string, ExpectedRevision, bigint | 'no_stream'][] = [
      [s, 'no_stream', 1n],
      [s, 0n, 1n],
      [s, 2n, 1n],
      [s, 5n, 1n],
      [missing, 'exists', 'no_stream'],
      [missing, 0n, 'no_stream'],
      [missing, 3n, 'no_stream'],
    ];
    for (const [stream, expected, actual] of cases) {
      const error = await conflict(store.append(stream, [event()], { expected }));
      assert.is(error.stream, stream);
      assert.is(error.expected, expected);
      assert.is(
        error.actual,
        actual,
        `expected ${String(expected)} on ${stream === s ? 'a stream at 1' : 'a missing stream'}`,
      );
    }
    assert.is((await store.readStream(s)).length, 2);
    assert.equal(await store.readStream(missing), []);
    assert.is((await store.append(s, [event()], { expected: 'exists' })).nextExpectedRevision, 2n);
    assert.is((await store.append(s, [event()], { expected: 2n })).nextExpectedRevision, 3n);
    assert.is((await store.append(s, [event()], { expected: 'any' })).nextExpectedRevision, 4n);
    assert.is((await store.append(missing, [event()], { expected: 'any' })).nextExpectedRevision, 0n);
  });

  test('a retry naming a revision or no_stream gets the original result even after the stream moved on', async ({
    store,
  }) => {
    const s = streamName();
    const created = [event('Created')];
    const first = await store.append(s, created, { expected: 'no_stream' });
    const second = [event('Second'), event('Third')];
    const middle = await store.append(s, second, { expected: 0n });
    await store.append(s, [event('Later')], { expected: 2n });

    const createdAgain = await store.append(s, created, { expected: 'no_stream' });
    assert.is(createdAgain.nextExpectedRevision, 0n);
    assert.is(comparePositions(createdAgain.position, first.position), 0);
    const middleAgain = await store.append(s, second, { expected: 0n });
    assert.is(middleAgain.nextExpectedRevision, 2n);
    assert.is(comparePositions(middleAgain.position, middle.position), 0);
    assert.is((await store.readStream(s)).length, 4);

    // Only part of the ids where the retry would put them: not a retry, a conflict.
    const error = await conflict(store.append(s, [second[0]!, event('Other')], { expected: 0n }));
    assert.is(error.actual, 3n);
    assert.is((await store.readStream(s)).length, 4);
  });

  // Retries under `any` / `exists` are not part of the contract: PostgreSQL writes them again, and
  // EventStoreDB answers them only while its bounded cache of recent event ids still holds them
  // (tests/infra/eventstore.eventstoredb-server.test.ts). Callers that retry name a revision.

  test('event metadata round-trips: id, stream, revision, type, data, metadata with extra fields, creation time', async ({
    store,
  }) => {
    const s = streamName();
    const before = Date.now();
    const e = event('MetaChecked', { text: 'ünïcödé ✓', n: 1.5, list: [1, null, 'x'], nested: { deep: true } });
    e.metadata = {
      ...e.metadata,
      actor: { kind: 'user', id: 'u-1' },
      causation_id: randomUUID(),
      trace: { span: 'abc' },
    };
    const written = await store.append(s, [e], { expected: 'no_stream' });
    const [read] = await store.readStream(s);
    const [fromAll] = await store.readAll({ filter: { streamPrefixes: [s] } });
    for (const r of [read!, fromAll!]) {
      assert.is(r.id, e.id);
      assert.is(r.stream, s);
      assert.is(r.revision, 0n);
      assert.is(r.type, 'MetaChecked');
      assert.equal(r.data, e.data);
      assert.equal(r.metadata, e.metadata);
      assert.is(comparePositions(r.position, written.position), 0);
      assert.ok(r.created_at instanceof Date);
      // A wrong unit (ticks, seconds) lands decades away; the clocks of store and test agree to minutes.
      assert.ok(Math.abs(r.created_at.getTime() - before) < 10 * 60_000, r.created_at.toISOString());
    }
  });

  test('boundaries: readAll and subscribe after an event start at the next one; after the newest, only new appends', async ({
    store,
  }) => {
    const category = `edge${randomUUID().slice(0, 8)}`;
    const filter = { streamPrefixes: [`${category}-`] };
    const s = streamName(category);
    const a = await store.append(s, [event('A')], { expected: 'no_stream' });
    const bc = await store.append(s, [event('B'), event('C')], { expected: 0n });
    assert.equal(
      (await store.readAll({ after: a.position, filter })).map((e) => e.type),
      ['B', 'C'],
    );
    assert.equal(await store.readAll({ after: bc.position, filter }), []);
    const [b] = await store.readAll({ after: a.position, filter, limit: 1 });
    assert.equal(
      (await store.readAll({ after: b!.position, filter })).map((e) => e.type),
      ['C'],
    );
    assert.ok(comparePositions(a.position, b!.position) < 0 && comparePositions(b!.position, bc.position) < 0);

    const fromB = store.subscribe({ after: b!.position, filter });
    assert.equal(
      (await take(fromB, 1)).map((e) => e.type),
      ['C'],
    );
    await fromB.close();
    const fromNewest = store.subscribe({ after: bc.position, filter });
    const collecting = take(fromNewest, 1);
    await store.append(s, [event('D')], { expected: 2n });
    assert.equal(
      (await collecting).map((e) => e.type),
      ['D'],
    );
    await fromNewest.close();
  });

  test('a retried append (same event ids, same expectation) is not duplicated', async ({ store }) => {
    const s = streamName();
    const batch = [event(), event()];
    const first = await store.append(s, batch, { expected: 'no_stream' });
    const again = await store.append(s, batch, { expected: 'no_stream' });
    assert.is(again.nextExpectedRevision, first.nextExpectedRevision);
    assert.is(comparePositions(again.position, first.position), 0);
    const next = [event()];
    await store.append(s, next, { expected: 1n });
    await store.append(s, next, { expected: 1n });
    const read = await store.readStream(s);
    assert.equal(
      read.map((e) => e.id),
      [...batch, ...next].map((e) => e.id),
    );
  });

  test('concurrent appenders: one wins each revision, losers conflict, none is lost on retry', async ({ store }) => {
    const s = streamName();
    await store.append(s, [event()], { expected: 'no_stream' });
    const racers = 8;
    const outcomes = await Promise.allSettled(
      Array.from({ length: racers }, () => store.append(s, [event('Raced')], { expected: 0n })),
    );
    assert.is(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    for (const o of outcomes) {
      if (o.status === 'rejected') {
        assert.instance(o.reason, WrongExpectedRevisionError);
        assert.is((o.reason as WrongExpectedRevisionError).actual, 1n);
      }
    }
    // Each writer retries from what it reads until it lands: all of them do, once each.
    const ids = await Promise.all(
      Array.from({ length: racers }, async () => {
        const e = event('Retried');
        for (;;) {
          const [last] = await store.readStream(s, { direction: 'backwards', limit: 1 });
          try {
            await store.append(s, [e], { expected: last!.revision });
            return e.id;
          } catch (error) {
            if (!(error instanceof WrongExpectedRevisionError)) throw error;
          }
        }
      }),
    );
    const read = await store.readStream(s);
    assert.is(read.length, 2 + racers);
    assert.equal(
      read.map((e) => e.revision),
      read.map((_, i) => BigInt(i)),
    );
    for (const id of ids) assert.is(read.filter((e) => e.id === id).length, 1);
  });

  test('concurrent `any` appenders all land, with contiguous revisions', async ({ store }) => {
    const s = streamName();
    await Promise.all(Array.from({ length: 10 }, () => store.append(s, [event()], { expected: 'any' })));
    const read = await store.readStream(s);
    assert.equal(
      read.map((e) => e.revision),
      Array.from({ length: 10 }, (_, i) => BigInt(i)),
    );
  });

  test('appendMany: several streams, each under its own expectation; a conflicting one is refused alone', async ({
    store,
  }) => {
    const [fresh, atZero, taken, anyOne, empty] = [
      streamName(),
      streamName(),
      streamName(),
      streamName(),
      streamName(),
    ];
    await store.append(atZero, [event()], { expected: 'no_stream' });
    await store.append(taken, [event()], { expected: 'no_stream' });
    const parts = [
      { stream: fresh, events: [event('A'), event('B')], expected: 'no_stream' as const },
      { stream: taken, events: [event('Lost')], expected: 'no_stream' as const },
      { stream: atZero, events: [event('C')], expected: 0n },
      { stream: anyOne, events: [event('D')], expected: 'any' as const },
      { stream: empty, events: [], expected: 'no_stream' as const },
    ];
    const outcomes = await store.appendMany(parts);
    assert.equal(
      outcomes.map((o) => o.ok),
      [true, false, true, true, true],
    );
    const refused = outcomes[1]!;
    if (refused.ok) throw new Error('unreachable');
    assert.instance(refused.error, WrongExpectedRevisionError);
    assert.is(refused.error.stream, taken);
    assert.is(refused.error.expected, 'no_stream');
    assert.is(refused.error.actual, 0n);
    const results = outcomes.map((o) => (o.ok ? o.result : null));
    assert.is(results[0]!.nextExpectedRevision, 1n);
    assert.is(results[2]!.nextExpectedRevision, 1n);
    assert.is(results[3]!.nextExpectedRevision, 0n);
    assert.is(results[4]!.nextExpectedRevision, -1n);
    assert.equal(
      (await store.readStream(fresh)).map((e) => e.type),
      ['A', 'B'],
    );
    assert.equal(
      (await store.readStream(taken)).map((e) => e.type),
      ['ThingHappened'],
    );
    assert.equal(
      (await store.readStream(atZero)).map((e) => e.type),
      ['ThingHappened', 'C'],
    );
    assert.equal(await store.readStream(empty), []);
    // In the log in the order given.
    const written = [
      ...(await store.readStream(fresh)),
      ...(await store.readStream(atZero)).slice(1),
      ...(await store.readStream(anyOne)),
    ];
    for (let i = 1; i < written.length; i++)
      assert.ok(comparePositions(written[i - 1]!.position, written[i]!.position) < 0);
    assert.is(comparePositions(results[0]!.position, written[1]!.position), 0);
    assert.equal(await store.appendMany([]), []);
  });

  test('appendMany: a retried call duplicates nothing; a stream named twice is refused', async ({ store }) => {
    const [a, b] = [streamName(), streamName()];
    const parts = [
      { stream: a, events: [event(), event()], expected: 'no_stream' as const },
      { stream: b, events: [event()], expected: 'no_stream' as const },
    ];
    const first = await store.appendMany(parts);
    const again = await store.appendMany(parts);
    assert.equal(
      again.map((o) => o.ok),
      [true, true],
    );
    for (const [i, o] of again.entries()) {
      const before = first[i]!;
      if (!o.ok || !before.ok) throw new Error('unreachable');
      assert.is(o.result.nextExpectedRevision, before.result.nextExpectedRevision);
      assert.is(comparePositions(o.result.position, before.result.position), 0);
    }
    assert.is((await store.readStream(a)).length, 2);
    assert.is((await store.readStream(b)).length, 1);
    try {
      await store.appendMany([
        { stream: a, events: [event()], expected: 'any' },
        { stream: a, events: [event()], expected: 'any' },
      ]);
      assert.unreachable('a stream named twice');
    } catch (error) {
      assert.not.instance(error, WrongExpectedRevisionError);
      assert.match((error as Error).message, /once/);
    }
  });

  test('appendMany atomic: all streams or none, where the store can (else refused before writing)', async ({
    store,
  }) => {
    const [fresh, atZero, taken] = [streamName(), streamName(), streamName()];
    await store.append(atZero, [event()], { expected: 'no_stream' });
    await store.append(taken, [event()], { expected: 'no_stream' });
    if (!store.atomicAppendMany) {
      // EventStoreDB has no transaction across streams: it says so, and writes nothing when asked.
      try {
        await store.appendMany([{ stream: fresh, events: [event()], expected: 'no_stream' }], { atomic: true });
        assert.unreachable('an atomic appendMany on a store that cannot');
      } catch (error) {
        assert.not.instance(error, WrongExpectedRevisionError);
        assert.match((error as Error).message, /atomic/);
      }
      assert.equal(await store.readStream(fresh), []);
      return;
    }
    // One stream's expectation fails: nothing is written, and that stream is the conflict.
    const refused = await conflict(
      store.appendMany(
        [
          { stream: fresh, events: [event('A')], expected: 'no_stream' },
          { stream: atZero, events: [event('B')], expected: 0n },
          { stream: taken, events: [event('Lost')], expected: 'no_stream' },
        ],
        { atomic: true },
      ),
    );
    assert.is(refused.stream, taken);
    assert.is(refused.actual, 0n);
    assert.equal(await store.readStream(fresh), []);
    assert.is((await store.readStream(atZero)).length, 1);
    // Every expectation holds: all written, in the order given; a retried call duplicates nothing.
    const parts = [
      { stream: fresh, events: [event('A'), event('A2')], expected: 'no_stream' as const },
      { stream: atZero, events: [event('B')], expected: 0n },
    ];
    const first = await store.appendMany(parts, { atomic: true });
    assert.equal(
      first.map((o) => o.ok),
      [true, true],
    );
    const again = await store.appendMany(parts, { atomic: true });
    for (const [i, o] of again.entries()) {
      const before = first[i]!;
      if (!o.ok || !before.ok) throw new Error('unreachable');
      assert.is(o.result.nextExpectedRevision, before.result.nextExpectedRevision);
      assert.is(comparePositions(o.result.position, before.result.position), 0);
    }
    assert.equal(
      (await store.readStream(fresh)).map((e) => e.type),
      ['A', 'A2'],
    );
    assert.equal(
      (await store.readStream(atZero)).map((e) => e.type),
      ['ThingHappened', 'B'],
    );
    // Racing atomic calls on a shared stream: one wins, and only the winner's other stream is written.
    const shared = streamName();
    const own = Array.from({ length: 4 }, () => streamName());
    const calls = await Promise.allSettled(
      own.map((stream) =>
        store.appendMany(
          [
            { stream: shared, events: [event('Raced')], expected: 'no_stream' },
            { stream, events: [event('Own')], expected: 'no_stream' },
          ],
          { atomic: true },
        ),
      ),
    );
    assert.is(calls.filter((c) => c.status === 'fulfilled').length, 1);
    for (const c of calls) if (c.status === 'rejected') assert.instance(c.reason, WrongExpectedRevisionError);
    const ownWritten = await Promise.all(own.map((stream) => store.readStream(stream)));
    assert.is(ownWritten.filter((events) => events.length > 0).length, 1);
    assert.is((await store.readStream(shared)).length, 1);
  });

  test('appendMany: racing calls on the same no_stream streams write each stream once, and lose none of the rest', async ({
    store,
  }) => {
    const shared = Array.from({ length: 20 }, () => streamName());
    const racers = 4;
    const calls = await Promise.all(
      Array.from({ length: racers }, (_, r) =>
        store.appendMany([
          ...shared.map((stream) => ({
            stream,
            events: [event('Raced', { racer: r })],
            expected: 'no_stream' as const,
          })),
          { stream: streamName(`own${r}`), events: [event('Own')], expected: 'no_stream' as const },
        ]),
      ),
    );
    for (const [i, stream] of shared.entries()) {
      assert.is(calls.filter((outcomes) => outcomes[i]!.ok).length, 1, `${stream}: one writer`);
      assert.is((await store.readStream(stream)).length, 1);
    }
    for (const outcomes of calls) assert.ok(outcomes.at(-1)!.ok, "each caller's own stream is written");
  });

  test('readStream: forwards and backwards, from a revision, with a limit; a missing stream is empty', async ({
    store,
  }) => {
    const s = streamName();
    const appended = Array.from({ length: 6 }, (_, i) => event('Numbered', { n: i }));
    await store.append(s, appended, { expected: 'no_stream' });
    const all = await store.readStream(s);
    assert.equal(
      all.map((e) => e.data.n),
      [0, 1, 2, 3, 4, 5],
    );
    assert.equal(
      all.map((e) => e.type),
      appended.map(() => 'Numbered'),
    );
    assert.equal(
      (await store.readStream(s, { from: 2n, limit: 3 })).map((e) => e.revision),
      [2n, 3n, 4n],
    );
    assert.equal(
      (await store.readStream(s, { direction: 'backwards', limit: 2 })).map((e) => e.revision),
      [5n, 4n],
    );
    assert.equal(
      (await store.readStream(s, { direction: 'backwards', from: 1n })).map((e) => e.revision),
      [1n, 0n],
    );
    assert.equal(await store.readStream(streamName()), []);
    const first = all[0]!;
    assert.is(first.stream, s);
    assert.is(first.id, appended[0]!.id);
    assert.equal(first.metadata, appended[0]!.metadata);
    assert.instance(first.created_at, Date);
  });

  test('readStreams: several whole streams in one read, each in revision order; a missing one is empty', async ({
    store,
  }) => {
    const [a, b, missing] = [streamName(), streamName(), streamName()];
    await store.append(a, [event('A0'), event('A1')], { expected: 'no_stream' });
    await store.append(b, [event('B0')], { expected: 'no_stream' });
    await store.append(a, [event('A2')], { expected: 1n });
    const read = await store.readStreams([a, missing, b]);
    assert.equal([...read.keys()].sort(), [a, b, missing].sort());
    assert.equal(
      read.get(a)!.map((e) => [e.type, e.revision]),
      [
        ['A0', 0n],
        ['A1', 1n],
        ['A2', 2n],
      ],
    );
    assert.equal(
      read.get(b)!.map((e) => e.type),
      ['B0'],
    );
    assert.equal(read.get(missing), []);
    assert.equal(read.get(a), await store.readStream(a));
    assert.is((await store.readStreams([])).size, 0);
  });

  test('readAll: global order across streams, after a position, filtered by stream prefix and type', async ({
    store,
  }) => {
    const category = `ra${randomUUID().slice(0, 8)}`;
    const a = streamName(category);
    const b = streamName(category);
    const r1 = await store.append(a, [event('A1')], { expected: 'no_stream' });
    await store.append(b, [event('B1')], { expected: 'no_stream' });
    await store.append(a, [event('A2'), event('A3')], { expected: 0n });
    const filter = { streamPrefixes: [`${category}-`] };
    const all = await store.readAll({ filter, limit: 100 });
    assert.equal(
      all.map((e) => e.type),
      ['A1', 'B1', 'A2', 'A3'],
    );
    for (let i = 1; i < all.length; i++) assert.ok(comparePositions(all[i - 1]!.position, all[i]!.position) < 0);
    assert.equal(
      (await store.readAll({ after: r1.position, filter, limit: 100 })).map((e) => e.type),
      ['B1', 'A2', 'A3'],
    );
    assert.equal(
      (await store.readAll({ filter, limit: 2 })).map((e) => e.type),
      ['A1', 'B1'],
    );
    const typed = await store.readAll({ filter: { ...filter, eventTypes: ['A2', 'B1'] }, limit: 100 });
    assert.equal(
      typed.map((e) => e.type),
      ['B1', 'A2'],
    );
  });

  test('order is numeric, not textual: 12 revisions in order, paged reads of the log see each event once', async ({
    store,
  }) => {
    const s = streamName();
    await store.append(
      s,
      Array.from({ length: 12 }, (_, i) => event('Numbered', { n: i })),
      { expected: 'no_stream' },
    );
    assert.equal(
      (await store.readStream(s)).map((e) => e.data.n),
      Array.from({ length: 12 }, (_, i) => i),
    );
    assert.equal((await store.readStream(s, { direction: 'backwards', limit: 1 }))[0]!.revision, 11n);
    const category = `page${randomUUID().slice(0, 8)}`;
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const e = event('Paged', { i });
      ids.push(e.id);
      await store.append(streamName(category), [e], { expected: 'no_stream' });
    }
    const seen = await readAllPages(store, { streamPrefixes: [`${category}-`] }, 3);
    assert.equal(
      seen.map((e) => e.id),
      ids,
    );
  });

  test('subscribe from the start: catch-up, then live, no gap and no duplicate', async ({ store }) => {
    const category = `sub${randomUUID().slice(0, 8)}`;
    const filter = { streamPrefixes: [`${category}-`] };
    for (let i = 0; i < 5; i++)
      await store.append(streamName(category), [event('Before', { i })], { expected: 'no_stream' });
    const sub = store.subscribe({ after: 'start', filter });
    const collecting = take(sub, 25);
    // Live appends from several writers at once.
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        const s = streamName(category);
        for (let i = 0; i < 5; i++) await store.append(s, [event('Live', { w, i })], { expected: 'any' });
      }),
    );
    const got = await collecting;
    await sub.close();
    assert.is(got.length, 25);
    assert.is(new Set(got.map((e) => e.id)).size, 25);
    assert.equal(
      got.slice(0, 5).map((e) => e.type),
      Array(5).fill('Before'),
    );
    for (let i = 1; i < got.length; i++) assert.ok(comparePositions(got[i - 1]!.position, got[i]!.position) < 0);
  });

  test('subscribe after a position, and from the end', async ({ store }) => {
    const category = `pos${randomUUID().slice(0, 8)}`;
    const filter = { streamPrefixes: [`${category}-`] };
    const s = streamName(category);
    const first = await store.append(s, [event('One')], { expected: 'no_stream' });
    await store.append(s, [event('Two')], { expected: 0n });
    const fromPos = store.subscribe({ after: first.position, filter });
    assert.equal(
      (await take(fromPos, 1)).map((e) => e.type),
      ['Two'],
    );
    await fromPos.close();

    const fromEnd = store.subscribe({ after: 'end', filter });
    const collecting = take(fromEnd, 1);
    await new Promise((r) => setTimeout(r, 100));
    await store.append(s, [event('Three')], { expected: 1n });
    assert.equal(
      (await collecting).map((e) => e.type),
      ['Three'],
    );
    await fromEnd.close();
  });

  test('a 1 MB event round-trips', async ({ store }) => {
    const s = streamName();
    const big = 'x'.repeat(1024 * 1024);
    await store.append(s, [event('Big', { big, unicode: 'é✓' })], { expected: 'no_stream' });
    const [read] = await store.readStream(s);
    assert.is((read!.data.big as string).length, big.length);
    assert.is(read!.data.unicode, 'é✓');
  });

  test('positions are bigints that survive serialisation', async ({ store }) => {
    const s = streamName();
    const { position } = await store.append(s, [event()], { expected: 'no_stream' });
    assert.is(typeof position.commit, 'bigint');
    assert.is(typeof position.prepare, 'bigint');
    const text = JSON.stringify({ at: formatPosition(position) });
    const back = parsePosition(JSON.parse(text).at);
    assert.is(comparePositions(back, position), 0);
    const [read] = await store.readStream(s);
    assert.is(comparePositions(read!.position, position), 0);
    const head = await store.headPosition();
    assert.ok(head && comparePositions(head, position) >= 0);
  });

  test('countAfter counts matching events after a position, up to a cap', async ({ store }) => {
    const type = `Counted${randomUUID().replace(/-/g, '')}`;
    const s = streamName();
    const { position: first } = await store.append(s, [event(type)], { expected: 'no_stream' });
    await store.append(s, [event(type), event('Unrelated'), event(type), event(type)], { expected: 0n });
    const filter = { eventTypes: [type] };
    assert.is(await store.countAfter('start', filter, 100), 4);
    assert.is(await store.countAfter(first, filter, 100), 3);
    assert.is(await store.countAfter(first, filter, 2), 2);
    const head = (await store.headPosition())!;
    assert.is(await store.countAfter(head, filter, 100), 0);
  });

  test('countAfter finds matching events that are rare among many others, the last event not matching', async ({
    store,
  }) => {
    const type = `Rare${randomUUID().replace(/-/g, '')}`;
    const s = streamName();
    const noise = (n: number) => Array.from({ length: n }, () => event('Noise'));
    const { position: afterFirst } = await store.append(s, [...noise(700), event(type), ...noise(700)], {
      expected: 'no_stream',
    });
    const { position: second } = await store.append(s, [event(type)], { expected: 1400n });
    await store.append(s, noise(300), { expected: 1401n });
    const filter = { eventTypes: [type] };
    assert.is(await store.countAfter('start', filter, 100), 2);
    assert.is(await store.countAfter('start', filter, 1), 1);
    assert.is(await store.countAfter(afterFirst, filter, 100), 1);
    assert.is(await store.countAfter(second, filter, 100), 0);
    assert.is(await store.countAfter('start', { eventTypes: [`${type}Never`] }, 100), 0);
  });

  test('the hash chain covers this log in global order, with signed checkpoints (chain kept in PostgreSQL beside it)', async ({
    store,
  }) => {
    const chainDb = await freshDatabase('contract_chain');
    try {
      const key = signingKeyFromSeed(generateSigningSeedHex());
      const chain = new ChainStore(chainDb.pool);
      const log = createLogger({ level: 'error', sink: () => {} });
      const chainer = new Chainer(store, chain, chainDb.pool, key, systemClock, log);
      const s = streamName('chained');
      await store.append(s, [event('One', { n: 1 }), event('Two', { n: 2, nested: { b: 1, a: [1, 'x'] } })], {
        expected: 'no_stream',
      });
      const first = await chainer.catchUp();
      assert.ok(first >= 2);
      await store.append(s, [event('Three', { n: 3 })], { expected: 1n });
      assert.is(await chainer.catchUp(), 1);

      // Every event of the log, once each, in global order, hashed as crypto/audit.ts defines it.
      const all = await readAllPages(store, {}, 100);
      const links = await chain.links(0n, 100_000);
      assert.equal(
        links.map((l) => formatPosition(l.position)),
        all.map((e) => formatPosition(e.position)),
      );
      let previous = GENESIS_HASH;
      for (const [i, e] of all.entries()) {
        previous = chainHash(previous, entryJsonOf(e));
        assert.is(links[i]!.hash, previous);
      }
      const verifier = new ChainVerifier(key.publicKeyHex);
      for await (const item of auditItems(store, chain, { publicKey: key.publicKeyHex, now: new Date() }))
        assert.ok(verifier.push(item), JSON.stringify(verifier.result()));
      const result = verifier.result();
      assert.ok(result.ok);
      assert.is(result.events, all.length);
      assert.ok(result.checkpoints >= 1); // the first pass signs the head (no checkpoint for a minute)
    } finally {
      await chainDb.drop();
    }
  });

  test.run();
}
