// The test double against the server's own rules, through the official client (and raw gRPC where
// the client would never send what is tested): size accounting per server version, the bounded
// cache behind `any` retries, required metadata, the subscription protocol (Checkpoint, CaughtUp),
// and a node that goes away mid-way. Each on both write paths where appends are involved.
// Double only: these need settings (sizes, cache bound) a live server fixes at start-up.

import { randomUUID } from 'node:crypto';
import grpc from '@grpc/grpc-js';
import {
  EventStoreDBClient,
  MaxAppendSizeExceededError,
  NO_STREAM,
  START,
  UnavailableError,
  binaryEvent,
  streamNameFilter,
  type AllStreamSubscription,
  type Position as EsdbPosition,
} from '@eventstore/db-client';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EventStoreDbEventStore } from '../../infra/eventstore/eventstoredb.ts';
import { comparePositions } from '../../infra/eventstore/position.ts';
import { startEsdbTestServer, type EsdbTestServerOptions } from '../doubles/esdb-test-server.ts';
import { event } from './eventstore.contract.ts';

const bytes = (n: number) => new Uint8Array(n).fill(120);

async function withDouble<T>(
  options: EsdbTestServerOptions,
  body: (client: EventStoreDBClient, store: EventStoreDbEventStore, url: string) => Promise<T>,
): Promise<T> {
  const server = await startEsdbTestServer({ statsIntervalMs: 0, ...options });
  const client = EventStoreDBClient.connectionString(server.url);
  const store = new EventStoreDbEventStore(server.url);
  try {
    return await body(client, store, server.url);
  } finally {
    await client.dispose();
    await store.close();
    await server.stop();
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.unreachable('expected the call to fail');
}

for (const serverFeatures of [true, false]) {
  const path = serverFeatures ? 'BatchAppend' : 'Append';
  const test = suite(`esdb double (${path} path): the server's append rules`);

  test('size from 24.10.5: data + metadata + 2 × type characters, summed over the append; refused whole', async () => {
    await withDouble({ serverFeatures, maxAppendSize: 1000 }, async (client) => {
      const s = `size-${randomUUID()}`;
      // 600 + 300 + 2 × 60 = 1020: over, though the data alone fits.
      const over = binaryEvent({ type: 'T'.repeat(60), data: bytes(600), metadata: bytes(300) });
      const error = await rejection(client.appendToStream(s, over, { expectedRevision: NO_STREAM }));
      assert.instance(error, MaxAppendSizeExceededError);
      assert.is((error as MaxAppendSizeExceededError).maxAppendSize, 1000);
      // Two events of 500 each (400 + 80 + 2 × 10): 1000 in all, not over.
      const fits = () => binaryEvent({ type: 'T'.repeat(10), data: bytes(400), metadata: bytes(80) });
      await client.appendToStream(s, [fits(), fits()], { expectedRevision: NO_STREAM });
      const third = await rejection(client.appendToStream(s, [fits(), fits(), fits()]));
      assert.instance(third, MaxAppendSizeExceededError);
      let count = 0;
      for await (const _ of client.readStream(s)) count += 1;
      assert.is(count, 2);
    });
  });

  test('size up to 24.10.3: the data alone counts', async () => {
    await withDouble({ serverFeatures, maxAppendSize: 1000, sizeRule: 'data-only' }, async (client) => {
      const s = `size-${randomUUID()}`;
      await client.appendToStream(s, binaryEvent({ type: 'T'.repeat(60), data: bytes(600), metadata: bytes(300) }));
      const error = await rejection(
        client.appendToStream(s, [
          binaryEvent({ type: 'T', data: bytes(600) }),
          binaryEvent({ type: 'T', data: bytes(401) }),
        ]),
      );
      assert.instance(error, MaxAppendSizeExceededError);
    });
  });

  test('the per-event limit (MaxAppendEventSize) refuses the append, nothing written', async () => {
    await withDouble({ serverFeatures, maxAppendSize: 10_000, maxAppendEventSize: 500 }, async (client, store) => {
      const s = `event-size-${randomUUID()}`;
      const error = await rejection(
        client.appendToStream(s, [
          binaryEvent({ type: 'T', data: bytes(100) }),
          binaryEvent({ type: 'T', data: bytes(600) }),
        ]),
      );
      assert.ok(error instanceof Error);
      assert.not.instance(error, MaxAppendSizeExceededError);
      assert.equal(await store.readStream(s), []);
    });
  });

  test('any retries: answered from the bounded id cache while it holds the ids, duplicated once it forgot them', async () => {
    await withDouble({ serverFeatures, idCacheSize: 4 }, async (_client, store) => {
      const s = `cache-${randomUUID()}`;
      const batch = [event('A'), event('B')];
      const first = await store.append(s, batch, { expected: 'any' });
      const prompt = await store.append(s, batch, { expected: 'any' });
      assert.is(comparePositions(prompt.position, first.position), 0);
      assert.is((await store.readStream(s)).length, 2);

      for (let i = 0; i < 4; i++) await store.append(`other-${randomUUID()}`, [event()], { expected: 'no_stream' });
      // The explicit form still finds them where they stand: the original result.
      const explicit = await store.append(s, batch, { expected: 'no_stream' });
      assert.is(comparePositions(explicit.position, first.position), 0);
      // `any` asks only the cache, which forgot them: written again.
      const late = await store.append(s, batch, { expected: 'any' });
      assert.is(late.nextExpectedRevision, 3n);
      assert.equal(
        (await store.readStream(s)).map((e) => e.type),
        ['A', 'B', 'A', 'B'],
      );
    });
  });

  test('an any retry whose first id is remembered and a later one is not: refused as a conflict', async () => {
    await withDouble({ serverFeatures }, async (_client, store) => {
      const s = `corrupt-${randomUUID()}`;
      const a = event('A');
      await store.append(s, [a], { expected: 'any' });
      const error = await rejection(store.append(s, [a, event('New')], { expected: 'any' }));
      assert.is((error as Error).name, 'WrongExpectedRevisionError');
      assert.is((await store.readStream(s)).length, 1);
    });
  });

  test('a node that goes away: the append fails UNAVAILABLE, nothing written; the next append reconnects', async () => {
    const server = await startEsdbTestServer({ serverFeatures, statsIntervalMs: 0 });
    const store = new EventStoreDbEventStore(server.url);
    try {
      const [a, b, c] = [`a-${randomUUID()}`, `b-${randomUUID()}`, `c-${randomUUID()}`];
      server.faults.failAppend = (stream) => stream === b;
      const error = await rejection(
        store.appendMany([a, b, c].map((stream) => ({ stream, events: [event()], expected: 'no_stream' as const }))),
      );
      assert.instance(error, UnavailableError);
      assert.is((await store.readStream(a)).length, 1, 'the streams before it are written');
      assert.equal(await store.readStream(b), []);
      assert.equal(await store.readStream(c), [], 'the sequence stopped');
      server.faults.failAppend = undefined;
      const outcomes = await store.appendMany(
        [a, b, c].map((stream) => ({ stream, events: [event()], expected: 'any' as const })),
      );
      assert.ok(outcomes.every((o) => o.ok));
      assert.is(server.counters[serverFeatures ? 'append' : 'batchAppend'], 0);
    } finally {
      await store.close();
      await server.stop();
    }
  });

  test.run();
}

const raw = suite('esdb double: required metadata (raw gRPC, as a client other than ours could send it)');

raw(
  'Append: a message without content-type is refused INVALID_ARGUMENT, missing-required-metadata-property',
  async () => {
    const server = await startEsdbTestServer({ statsIntervalMs: 0 });
    const client = new streamsGrpc.StreamsClient(
      server.url.replace(/^esdb:\/\/|\?.*$/g, ''),
      grpc.credentials.createInsecure(),
    );
    try {
      const stream = `raw-${randomUUID()}`;
      const error = await new Promise<grpc.ServiceError>((resolve) => {
        const call = client.append((e) => resolve(e!));
        const options = new streamsPb.AppendReq.Options()
          .setStreamIdentifier(new sharedPb.StreamIdentifier().setStreamName(Buffer.from(stream)))
          .setAny(new sharedPb.Empty());
        call.write(new streamsPb.AppendReq().setOptions(options));
        const message = new streamsPb.AppendReq.ProposedMessage()
          .setId(new sharedPb.UUID().setString(randomUUID()))
          .setData(bytes(3));
        message.getMetadataMap().set('type', 'NoContentType');
        call.write(new streamsPb.AppendReq().setProposedMessage(message));
        call.end();
      });
      assert.is(error.code, grpc.status.INVALID_ARGUMENT);
      assert.equal(error.metadata.get('exception'), ['missing-required-metadata-property']);
      assert.ok(error.details.includes("'content-type'"));
    } finally {
      client.close();
      await server.stop();
    }
  },
);

raw('BatchAppend: a message without type is answered, for its correlation, with a BadRequest status', async () => {
  const server = await startEsdbTestServer({ statsIntervalMs: 0 });
  const client = new streamsGrpc.StreamsClient(
    server.url.replace(/^esdb:\/\/|\?.*$/g, ''),
    grpc.credentials.createInsecure(),
  );
  try {
    const call = client.batchAppend();
    const answered = new Promise<streamsPb.BatchAppendResp>((resolve) => call.once('data', resolve));
    call.on('error', () => {});
    const correlation = new sharedPb.UUID().setString(randomUUID());
    const options = new streamsPb.BatchAppendReq.Options().setStreamIdentifier(
      new sharedPb.StreamIdentifier().setStreamName(Buffer.from(`raw-${randomUUID()}`)),
    );
    const message = new streamsPb.BatchAppendReq.ProposedMessage()
      .setId(new sharedPb.UUID().setString(randomUUID()))
      .setData(bytes(3));
    message.getMetadataMap().set('content-type', 'application/octet-stream');
    call.write(
      new streamsPb.BatchAppendReq()
        .setCorrelationId(correlation)
        .setOptions(options)
        .setProposedMessagesList([message])
        .setIsFinal(true),
    );
    const resp = await answered;
    call.end();
    assert.is(resp.getCorrelationId()?.getString(), correlation.getString());
    assert.ok(resp.hasError());
    assert.is(resp.getError()!.getDetails()!.getTypeName(), 'event_store.client.BadRequest');
    assert.is(resp.getError()!.getCode(), grpc.status.INVALID_ARGUMENT);
  } finally {
    client.close();
    await server.stop();
  }
});

raw.run();

const versions = suite('esdb double: a server older than the adapter supports');

versions('before 22.6, stream reads carry no position: the adapter says so rather than inventing one', async () => {
  await withDouble({ positionsOnStreamReads: false }, async (_client, store) => {
    const s = `old-${randomUUID()}`;
    await store.append(s, [event()], { expected: 'no_stream' });
    const error = await rejection(store.readStream(s));
    assert.match((error as Error).message, /older than 22\.6/);
    assert.is((await store.readAll({ filter: { streamPrefixes: [s] } })).length, 1, '$all reads still carry positions');
  });
});

versions.run();

const protocol = suite('esdb double: the subscription protocol, through the official client');

protocol(
  'a filtered $all subscription: confirmation, Checkpoints every interval × window considered events, CaughtUp, then live',
  async () => {
    await withDouble({}, async (client) => {
      const prefix = `chk${randomUUID().slice(0, 8)}-`;
      for (let i = 0; i < 20; i++)
        await client.appendToStream(`noise-${randomUUID()}`, binaryEvent({ type: 'Noise', data: bytes(1) }));
      await client.appendToStream(`${prefix}1`, binaryEvent({ type: 'Mine', data: bytes(1) }));

      const checkpoints: EsdbPosition[] = [];
      const seen: string[] = [];
      const subscription: AllStreamSubscription = client.subscribeToAll({
        fromPosition: START,
        filter: streamNameFilter({
          prefixes: [prefix],
          maxSearchWindow: 4,
          checkpointInterval: 2,
          checkpointReached: (_s, p) => void checkpoints.push(p),
        }),
      });
      let confirmed = false;
      const caughtUp = new Promise<number>((resolve) => subscription.once('caughtUp', () => resolve(seen.length)));
      subscription.once('confirmation', () => (confirmed = true));
      const live = new Promise<void>((resolve) => {
        subscription.on('data', (resolved) => {
          seen.push(resolved.event!.streamId);
          if (seen.length === 2) resolve();
        });
      });
      assert.is(await caughtUp, 1, 'caught up after the one catch-up event');
      assert.ok(confirmed);
      const duringCatchUp = checkpoints.length;
      assert.ok(
        duringCatchUp >= 2,
        `${duringCatchUp} checkpoints over ${20 + 7} considered events (window 4 × interval 2)`,
      );
      for (let i = 1; i < checkpoints.length; i++) assert.ok(checkpoints[i - 1]!.commit <= checkpoints[i]!.commit);

      for (let i = 0; i < 10; i++)
        await client.appendToStream(`noise-${randomUUID()}`, binaryEvent({ type: 'Noise', data: bytes(1) }));
      await client.appendToStream(`${prefix}2`, binaryEvent({ type: 'Mine', data: bytes(1) }));
      await live;
      assert.equal(seen, [`${prefix}1`, `${prefix}2`]);
      assert.ok(checkpoints.length > duringCatchUp, 'checkpoints continue live');
      await subscription.unsubscribe();
    });
  },
);

protocol.run();
