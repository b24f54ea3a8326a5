// The EventStoreDB adapter: the shared contract over real gRPC against the in-process test double
// twice — with ServerFeatures listing BatchAppend (the write path every append takes against a
// server since 21.10) and without it (Streams.Append, older servers) — and against a live server
// too when EVENTSTORE_URL is set. Then what only this adapter must prove, on the same targets.

import { randomUUID } from 'node:crypto';
import { MaxAppendSizeExceededError } from '@eventstore/db-client';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStoreDbEventStore } from '../../infra/eventstore/eventstoredb.ts';
import { comparePositions } from '../../infra/eventstore/position.ts';
import { startEsdbTestServer, type EsdbTestServer } from '../doubles/esdb-test-server.ts';
import { event, eventStoreContract, take, type ContractTarget } from './eventstore.contract.ts';

// The contract appends a 1 MB event; EventStoreDB refuses appends above 1 MiB unless started with
// a larger --max-append-size (EVENTSTORE_MAX_APPEND_SIZE), so the double is configured like that.
const MAX_APPEND_SIZE = 4 * 1024 * 1024;

interface Target extends ContractTarget {
  server?: EsdbTestServer; // absent on a live server
}

const paths = [
  { name: 'BatchAppend, ServerFeatures on', serverFeatures: true },
  { name: 'Append, ServerFeatures off', serverFeatures: false },
] as const;

async function againstDouble(serverFeatures: boolean): Promise<Target> {
  // Stats every 200 ms: system events land between ours all through the run, as on a node.
  const server = await startEsdbTestServer({ maxAppendSize: MAX_APPEND_SIZE, serverFeatures, statsIntervalMs: 200 });
  const store = new EventStoreDbEventStore(server.url);
  return {
    store,
    server,
    cleanup: async () => {
      await store.close();
      await server.stop();
    },
  };
}

const live = process.env.EVENTSTORE_URL;
const targets: { name: string; make: () => Promise<Target> }[] = [
  ...paths.map((p) => ({
    name: `in-process gRPC test double, ${p.name}`,
    make: () => againstDouble(p.serverFeatures),
  })),
  ...(live
    ? [
        {
          name: 'live server',
          make: async (): Promise<Target> => {
            const store = new EventStoreDbEventStore(live);
            return { store, cleanup: () => store.close() };
          },
        },
      ]
    : []),
];

for (const target of targets) eventStoreContract(`eventstoredb (${target.name})`, target.make);

for (const target of targets) {
  const test = suite<{ target: Target; store: EventStoreDbEventStore }>(
    `eventstore eventstoredb only (${target.name})`,
  );
  test.before(async (ctx) => {
    ctx.target = await target.make();
    ctx.store = ctx.target.store as EventStoreDbEventStore;
  });
  test.after(async ({ target: t }) => {
    await t?.cleanup();
  });

  test('readAll, subscribe and headPosition skip `$` streams and types', async ({ store }) => {
    const category = `sys${randomUUID().slice(0, 8)}`;
    const mine = await store.append(`${category}-1`, [event('Mine')], { expected: 'no_stream' });
    const system = await store.append(`$${category}-stats`, [event('$statsCollected')], { expected: 'any' });
    const head = await store.headPosition();
    assert.ok(head && comparePositions(head, system.position) !== 0);

    const sub = store.subscribe({ after: mine.position });
    const collecting = take(sub, 1);
    await store.append(`${category}-1`, [event('Next')], { expected: 0n });
    const [next] = await collecting;
    await sub.close();
    assert.is(next?.stream, `${category}-1`);
    assert.is(next?.type, 'Next');

    const later = await store.readAll({ after: mine.position, limit: 10 });
    assert.is(later[0]?.type, 'Next');
    assert.not.ok(later.some((e) => e.stream.startsWith('$') || e.type.startsWith('$')));
  });

  test("the whole log read from the start holds none of the node's own events ($users, $user-*, $stats-*, …)", async ({
    store,
  }) => {
    const category = `whole${randomUUID().slice(0, 8)}`;
    await store.append(`${category}-1`, [event('Mine')], { expected: 'no_stream' });
    await new Promise((r) => setTimeout(r, 450)); // on the double, two more `$stats-*` events meanwhile
    const all = [];
    let after;
    for (;;) {
      const page = await store.readAll({ after, limit: 200 });
      if (page.length === 0) break;
      all.push(...page);
      after = page.at(-1)!.position;
    }
    assert.ok(all.some((e) => e.stream === `${category}-1`));
    assert.not.ok(all.some((e) => e.stream.startsWith('$') || e.type.startsWith('$')));
    const head = await store.headPosition();
    assert.is(
      comparePositions(head!, all.at(-1)!.position),
      0,
      'the head is the newest of our events, not a later system event',
    );
  });

  test("positions: each event of an append has its own, commit == prepare; the result is the last one's", async ({
    store,
  }) => {
    const s = `pos-${randomUUID()}`;
    const result = await store.append(s, [event('A'), event('B'), event('C')], { expected: 'no_stream' });
    const read = await store.readStream(s);
    for (const e of read) assert.is(e.position.commit, e.position.prepare);
    assert.is(new Set(read.map((e) => e.position.commit)).size, 3);
    assert.ok(
      comparePositions(read[0]!.position, read[1]!.position) < 0 &&
        comparePositions(read[1]!.position, read[2]!.position) < 0,
    );
    assert.is(comparePositions(result.position, read[2]!.position), 0);
    assert.is(result.position.commit, result.position.prepare);
  });

  test('an append above the maximum append size is refused whole, with the size in the error', async ({
    store,
    target: t,
  }) => {
    const s = `big-${randomUUID()}`;
    const tooBig = 'x'.repeat(MAX_APPEND_SIZE / 2);
    let error: unknown;
    try {
      await store.append(
        s,
        [event('Half', { x: tooBig }), event('Half', { x: tooBig }), event('Half', { x: tooBig })],
        { expected: 'no_stream' },
      );
    } catch (e) {
      error = e;
    }
    assert.instance(error, MaxAppendSizeExceededError);
    if (!t.server) return; // a live server: whatever it was started with
    assert.is((error as MaxAppendSizeExceededError).maxAppendSize, MAX_APPEND_SIZE);
    assert.equal(await store.readStream(s), []);
  });

  test('conflicts on this write path map to our WrongExpectedRevisionError, which the command runner retries on', async ({
    store,
  }) => {
    const s = `wev-${randomUUID()}`;
    await store.append(s, [event()], { expected: 'no_stream' });
    for (const [expected, actual] of [
      ['no_stream', 0n],
      [3n, 0n],
    ] as const) {
      try {
        await store.append(s, [event()], { expected });
        assert.unreachable('a conflict');
      } catch (error) {
        assert.is((error as Error).name, 'WrongExpectedRevisionError');
        assert.is((error as { actual: unknown }).actual, actual);
      }
    }
  });

  if (target.name.includes('double')) {
    test('countAfter filters on the server: of many events, only the matching ones cross the wire', async ({
      target: t,
    }) => {
      const type = `Wire${randomUUID().replace(/-/g, '')}`;
      const s = `wire-${randomUUID()}`;
      const noise = () => Array.from({ length: 1000 }, () => event('Noise'));
      await t.store.append(s, [event(type), ...noise(), event(type), ...noise()], { expected: 'no_stream' });
      const before = t.server!.counters.eventsSent;
      assert.is(await t.store.countAfter('start', { eventTypes: [type] }, 100), 2);
      // The two matching events, and the one record read to find where the log ends.
      assert.is(t.server!.counters.eventsSent - before, 3);
    });

    test("the client takes the write path the server's features name", async ({ target: t }) => {
      const before = { ...t.server!.counters };
      await t.store.append(`path-${randomUUID()}`, [event()], { expected: 'no_stream' });
      const batch = t.server!.counters.batchAppend - before.batchAppend;
      const append = t.server!.counters.append - before.append;
      if (target.name.includes('ServerFeatures on')) assert.equal({ batch, append }, { batch: 1, append: 0 });
      else assert.equal({ batch, append }, { batch: 0, append: 1 });
    });
  }

  test.run();
}
