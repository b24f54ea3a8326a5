// The EventStoreDB adapter: the shared contract over real gRPC against the in-process test double,
// and against a live server too when EVENTSTORE_URL is set.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStoreDbEventStore } from '../../infra/eventstore/eventstoredb.ts';
import { comparePositions } from '../../infra/eventstore/position.ts';
import { startEsdbTestServer } from '../doubles/esdb-test-server.ts';
import { event, eventStoreContract, take, type ContractTarget } from './eventstore.contract.ts';

// The contract appends a 1 MB event; EventStoreDB refuses appends above 1 MiB unless started with
// a larger --max-append-size (EVENTSTORE_MAX_APPEND_SIZE), so the double is configured like that.
const MAX_APPEND_SIZE = 4 * 1024 * 1024;

async function againstDouble(): Promise<ContractTarget> {
  const server = await startEsdbTestServer({ maxAppendSize: MAX_APPEND_SIZE });
  const store = new EventStoreDbEventStore(server.url);
  return { store, cleanup: async () => { await store.close(); await server.stop(); } };
}

eventStoreContract('eventstoredb (in-process gRPC test double)', againstDouble);

const live = process.env.EVENTSTORE_URL;
if (live) {
  eventStoreContract('eventstoredb (live server)', async () => {
    const store = new EventStoreDbEventStore(live);
    return { store, cleanup: () => store.close() };
  });
}

// What only this adapter must prove: `$all` holds system events, and readers never see them.
const test = suite<{ target: ContractTarget }>('eventstore eventstoredb: system events stay hidden');
test.before(async (ctx) => {
  if (!live) {
    ctx.target = await againstDouble();
    return;
  }
  const store = new EventStoreDbEventStore(live);
  ctx.target = { store, cleanup: () => store.close() };
});
test.after(async ({ target }) => {
  await target?.cleanup();
});

test('readAll, subscribe and headPosition skip `$` streams and types', async ({ target: { store } }) => {
  const category = `sys${randomUUID().slice(0, 8)}`;
  const mine = await store.append(`${category}-1`, [event('Mine')], { expected: 'no_stream' });
  const system = await store.append(`$${category}-stats`, [event('$statsCollected')], { expected: 'any' });
  const head = await store.headPosition();
  assert.ok(head && comparePositions(head, system.position) !== 0);
  if (!live) assert.is(comparePositions(head, mine.position), 0); // a live server may have other writers

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

test.run();
