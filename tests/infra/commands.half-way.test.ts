// `runMany` when `appendMany` stops half way, on the EventStoreDB test double (a sequence of
// single appends there: the streams before a failing one are written, the rest are not). Each
// item settles on its own stream: written ones report their append, the others are decided again
// and appended alone; a retry of the whole batch completes what is left; no decision lands twice.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Decider, DomainEvent } from '../../domain/shared/decider.ts';
import { CommandRunner, type RunManyItem } from '../../infra/commands.ts';
import { EventStoreDbEventStore } from '../../infra/eventstore/eventstoredb.ts';
import { startEsdbTestServer, type EsdbTestServer } from '../doubles/esdb-test-server.ts';

// An idempotent command: open a stream once; opening it again decides nothing.
type Opened = DomainEvent<'Opened', { by: string }>;
const opener: Decider<boolean, { by: string }, Opened> = {
  initialState: () => false,
  evolve: () => true,
  decide: ({ by }, open) => (open ? [] : [{ type: 'Opened', data: { by } }]),
};
const context = { actor: { kind: 'system' as const, id: 'test' }, correlationId: randomUUID() };

const test = suite<{ server: EsdbTestServer; store: EventStoreDbEventStore }>('runMany half way (EventStoreDB double)');
test.before(async (ctx) => {
  ctx.server = await startEsdbTestServer();
  ctx.store = new EventStoreDbEventStore(ctx.server.url);
});
test.after(async ({ server, store }) => {
  await store?.close();
  await server?.stop();
});

const items = (streams: string[]): RunManyItem<boolean, { by: string }>[] =>
  streams.map((stream) => ({
    stream,
    command: { by: 'batch' },
    context,
    known: { state: false, revision: 'no_stream' as const },
  }));

/** Fail the `nth` append to one of `streams` (and, when `persist`, every later append to that stream). */
function failNth(server: EsdbTestServer, streams: string[], nth: number, persist: boolean): () => string | null {
  let seen = 0;
  let doomed: string | null = null;
  server.faults.failAppend = (stream) => {
    if (!streams.includes(stream)) return false;
    if (doomed === null && ++seen === nth) {
      doomed = stream;
      return true;
    }
    return persist && stream === doomed;
  };
  return () => doomed;
}

test('a failure after the first stream: the written one reports its own append, the rest are appended alone, each once', async ({
  server,
  store,
}) => {
  const streams = Array.from({ length: 4 }, () => `opened-${randomUUID()}`);
  const waited: string[] = [];
  const runner = new CommandRunner(store, async (events) => {
    waited.push(...events.map((e) => e.type));
  });
  failNth(server, streams, 2, false);
  try {
    const outcomes = await runner.runMany(opener, items(streams));
    assert.equal(
      outcomes.map((o) => o.ok),
      [true, true, true, true],
    );
    for (const [i, stream] of streams.entries()) {
      const history = await store.readStream(stream);
      assert.is(history.length, 1, `${stream}: one event`);
      const o = outcomes[i]!;
      assert.ok(o.ok && o.result.appended, 'each outcome carries its append');
      if (o.ok) {
        assert.equal(
          o.result.events.map((e) => e.type),
          ['Opened'],
        );
        assert.is(
          o.result.appended!.position.commit,
          history[0]!.position.commit,
          'the append reported is the one in the log',
        );
      }
    }
    assert.equal(
      waited,
      ['Opened', 'Opened', 'Opened', 'Opened'],
      'read-your-writes covers every item, the written one too',
    );
  } finally {
    server.faults.failAppend = undefined;
  }
});

test('a stream that stays unavailable fails alone; retrying the batch completes it and writes nothing twice', async ({
  server,
  store,
}) => {
  const streams = Array.from({ length: 4 }, () => `opened-${randomUUID()}`);
  const runner = new CommandRunner(store, async () => {});
  const doomed = failNth(server, streams, 2, true);
  const first = await runner.runMany(opener, items(streams));
  server.faults.failAppend = undefined;
  const failed = streams.indexOf(doomed()!);
  assert.is(failed, 1, 'the second stream of the batch failed');
  assert.equal(
    first.map((o) => o.ok),
    streams.map((_, i) => i !== failed),
  );
  assert.equal(
    await Promise.all(streams.map(async (s) => (await store.readStream(s)).length)),
    streams.map((_, i) => (i === failed ? 0 : 1)),
  );
  // The retry (the same commands, decided on stale hints): only the missing stream is written.
  const again = await runner.runMany(opener, items(streams));
  assert.equal(
    again.map((o) => o.ok),
    [true, true, true, true],
  );
  assert.equal(
    again.map((o) => (o.ok ? o.result.events.length : -1)),
    streams.map((_, i) => (i === failed ? 1 : 0)),
  );
  assert.equal(await Promise.all(streams.map(async (s) => (await store.readStream(s)).length)), [1, 1, 1, 1]);
});

test.run();
