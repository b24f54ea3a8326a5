// The double's fault hook and write-path counters, which other suites use for half-way failures.

import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStoreDbEventStore } from '../../infra/eventstore/eventstoredb.ts';
import { startEsdbTestServer } from '../doubles/esdb-test-server.ts';
import { event } from './eventstore.contract.ts';

test('faults.failAppend refuses the chosen stream with nothing written; others still append', async () => {
  const server = await startEsdbTestServer();
  const store = new EventStoreDbEventStore(server.url);
  try {
    const doomed = `doomed-${randomUUID()}`;
    const fine = `fine-${randomUUID()}`;
    server.faults.failAppend = (stream) => stream === doomed;
    let failed: unknown;
    try {
      await store.append(doomed, [event()], { expected: 'no_stream' });
    } catch (error) {
      failed = error;
    }
    assert.ok(failed, 'the append to the failing stream threw');
    await store.append(fine, [event()], { expected: 'no_stream' });
    assert.equal(await store.readStream(doomed), []);
    server.faults.failAppend = undefined;
    await store.append(doomed, [event()], { expected: 'no_stream' });
    assert.is((await store.readStream(doomed)).length, 1);
    assert.ok(server.counters.append + server.counters.batchAppend >= 3);
  } finally {
    await store.close();
    await server.stop();
  }
});

test.run();
