// The command handler against the real log: decide on the folded state, append with the
// revision read, and on a conflict decide again on the new state (bounded).

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { DomainError, type Decider, type DomainEvent } from '../../domain/shared/decider.ts';
import { CommandRunner, part } from '../../infra/commands.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

// A tiny aggregate: a bounded counter. Deciding twice on stale state would overshoot the bound.
type Added = DomainEvent<'Added', { n: number }>;
const counter: Decider<number, { add: number; max: number }, Added> = {
  initialState: () => 0,
  evolve: (total, e) => total + e.data.n,
  decide: ({ add, max }, total) => {
    if (total + add > max) throw new DomainError('conflict', 'over_limit', `would exceed ${max}`);
    return add === 0 ? [] : [{ type: 'Added', data: { n: add } }];
  },
};

const context = { actor: { kind: 'system' as const, id: 'test' }, correlationId: randomUUID() };

const test = suite<{ db: TestDatabase; store: PostgresEventStore }>('command handler');
test.before(async (ctx) => {
  ctx.db = await freshDatabase('commands');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
});
test.after(async ({ db, store }) => {
  await store.close();
  await db.drop();
});

test('appends the decided events with metadata, and returns the new state', async ({ store }) => {
  const stream = `counter-${randomUUID()}`;
  const first = await new CommandRunner(store, async () => {}).run(stream, counter, { add: 2, max: 10 }, context);
  assert.is(first.state, 2);
  assert.is(first.appended!.nextExpectedRevision, 0n);
  const [recorded] = await store.readStream(stream);
  assert.equal(recorded!.metadata.actor, context.actor);
  assert.is(recorded!.metadata.correlation_id, context.correlationId);
  assert.is(recorded!.metadata.schema, 1);
  const none = await new CommandRunner(store, async () => {}).run(stream, counter, { add: 0, max: 10 }, context);
  assert.is(none.appended, null);
  assert.is((await store.readStream(stream)).length, 1);
});

test('a domain rejection appends nothing', async ({ store }) => {
  const stream = `counter-${randomUUID()}`;
  try {
    await new CommandRunner(store, async () => {}).run(stream, counter, { add: 11, max: 10 }, context);
    assert.unreachable('accepted');
  } catch (error) {
    assert.instance(error, DomainError);
  }
  assert.equal(await store.readStream(stream), []);
});

test('concurrent commands: losers decide again on the new state; the bound holds', async ({ store }) => {
  const stream = `counter-${randomUUID()}`;
  const outcomes = await Promise.allSettled(
    Array.from({ length: 4 }, () =>
      new CommandRunner(store, async () => {}).run(stream, counter, { add: 1, max: 3 }, context),
    ),
  );
  assert.is(outcomes.filter((o) => o.status === 'fulfilled').length, 3);
  const rejected = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
  assert.is((rejected.reason as DomainError).code, 'over_limit');
  const events = await store.readStream(stream);
  assert.is(
    events.reduce((sum, e) => sum + Number(e.data.n), 0),
    3,
  );
});

test('awaitProjections false returns once appended; awaitProjections waits for the position given', async ({
  store,
}) => {
  const waited: string[] = [];
  const runner = new CommandRunner(store, async (events) => {
    waited.push(events.map((e) => `${e.position.commit}:${e.type}`).join(','));
  });
  const stream = `counter-${randomUUID()}`;
  const quick = await runner.run(stream, counter, { add: 1, max: 10 }, context, { awaitProjections: false });
  assert.equal(waited, []);
  await runner.awaitProjections(quick.appended!.position, ['Added']);
  assert.equal(waited, [`${quick.appended!.position.commit}:Added`]);
  await runner.run(stream, counter, { add: 1, max: 10 }, context);
  assert.is(waited.length, 2);
});

/** The store, with its stream reads listed. */
function countingReads(store: PostgresEventStore) {
  const reads: string[] = [];
  const counting = Object.assign(Object.create(store) as PostgresEventStore, {
    readStream: (s: string, o?: object) => {
      reads.push(s);
      return store.readStream(s, o);
    },
  });
  return { counting, reads };
}

test('a known state decides without reading the stream; a stale one is caught by the append and decided again on the log', async ({
  store,
}) => {
  const stream = `counter-${randomUUID()}`;
  const { counting, reads } = countingReads(store);
  const runner = new CommandRunner(counting, async () => {});
  // A new stream: the initial state at no_stream, no read.
  const first = await runner.run(stream, counter, { add: 2, max: 10 }, context, {
    known: { state: 0, revision: 'no_stream' },
  });
  assert.is(first.state, 2);
  assert.equal(reads, []);
  // Current: one append at the revision given, still no read.
  const second = await runner.run(stream, counter, { add: 3, max: 10 }, context, { known: { state: 2, revision: 0n } });
  assert.is(second.state, 5);
  assert.equal(reads, []);
  // Stale (the stream moved on to revision 1 meanwhile): the append is refused, the runner folds the log and decides again.
  const stale = await runner.run(stream, counter, { add: 1, max: 10 }, context, { known: { state: 2, revision: 0n } });
  assert.is(stale.state, 6);
  assert.equal(reads, [stream]);
  // A refusal on a (wrongly) stale hint is checked against the log: 9 + 1 is within the bound.
  const refusedOnHint = await runner.run(stream, counter, { add: 4, max: 10 }, context, {
    known: { state: 9, revision: 2n },
  });
  assert.is(refusedOnHint.state, 10);
  // A refusal that the log confirms stands, and appends nothing.
  try {
    await runner.run(stream, counter, { add: 1, max: 10 }, context, { known: { state: 10, revision: 3n } });
    assert.unreachable('accepted');
  } catch (error) {
    assert.is((error as DomainError).code, 'over_limit');
  }
  assert.equal(
    (await store.readStream(stream)).map((e) => e.data.n),
    [2, 3, 1, 4],
  );
});

test("a mixed append waits on each event's own position, taken from the append (no read back)", async ({ store }) => {
  type Mixed = DomainEvent<'Opened', { n: number }> | DomainEvent<'Added', { n: number }>;
  const opener: Decider<number, { add: number }, Mixed> = {
    initialState: () => 0,
    evolve: (total, e) => total + e.data.n,
    decide: ({ add }) => [
      { type: 'Opened', data: { n: 0 } },
      { type: 'Added', data: { n: add } },
    ],
  };
  const waited: { type: string; position: { commit: bigint; prepare: bigint } }[][] = [];
  const stream = `counter-${randomUUID()}`;
  const { counting, reads } = countingReads(store);
  await new CommandRunner(counting, async (events) => {
    waited.push(events);
  }).run(stream, opener, { add: 1 }, context);
  assert.equal(reads, [stream]); // the decision's own read of the (empty) stream only
  const written = await store.readStream(stream);
  assert.equal(waited, [written.map((e) => ({ type: e.type, position: e.position }))]);
});

test('runMany: many streams decided and appended in one transaction; a stale hint is decided again alone; refusals are outcomes', async ({
  store,
}) => {
  const name = () => `counter-${randomUUID()}`;
  const [fresh, known, stale, over, unread] = [name(), name(), name(), name(), name()];
  const runner = new CommandRunner(store, async () => {});
  await runner.run(known, counter, { add: 1, max: 10 }, context);
  await runner.run(stale, counter, { add: 1, max: 10 }, context);
  await runner.run(stale, counter, { add: 1, max: 10 }, context);
  await runner.run(over, counter, { add: 9, max: 10 }, context);
  await runner.run(unread, counter, { add: 4, max: 10 }, context);
  const waited: string[][] = [];
  const batch = new CommandRunner(store, async (events) => {
    waited.push(events.map((e) => e.type));
  });
  const outcomes = await batch.runMany(counter, [
    { stream: fresh, command: { add: 2, max: 10 }, context, known: { state: 0, revision: 'no_stream' } },
    { stream: known, command: { add: 2, max: 10 }, context, known: { state: 1, revision: 0n } },
    { stream: stale, command: { add: 2, max: 10 }, context, known: { state: 1, revision: 0n } }, // the stream is at revision 1
    { stream: over, command: { add: 2, max: 10 }, context }, // read: 9 + 2 is over
    { stream: unread, command: { add: 2, max: 10 }, context }, // read, then decided
  ]);
  assert.equal(
    outcomes.map((o) => o.ok),
    [true, true, true, false, true],
  );
  assert.equal(
    outcomes.map((o) => (o.ok ? o.result.state : (o.error as DomainError).code)),
    [2, 3, 4, 'over_limit', 6],
  );
  assert.equal(waited.length, 1, 'one wait for the whole batch');
  // The hinted and read decisions went in one transaction; the stale one was appended on its own afterwards.
  const last = async (s: string) => (await store.readStream(s)).at(-1)!.position.commit;
  const [a, b, c, d] = await Promise.all([last(fresh), last(known), last(unread), last(stale)]);
  assert.is(a, b);
  assert.is(a, c);
  assert.is.not(a, d);
  assert.equal((await store.readStream(over)).length, 1);
});

test('runTogether: streams of their own deciders appended all or none; a conflict decides all again', async ({
  store,
}) => {
  const runner = new CommandRunner(store, async () => {});
  assert.ok(runner.canRunTogether);
  const [a, b] = [`counter-${randomUUID()}`, `counter-${randomUUID()}`];
  const results = await runner.runTogether(
    [part(a, counter, { add: 2, max: 10 }), part(b, counter, { add: 3, max: 10 })],
    context,
  );
  assert.equal(
    results.map((r) => r.state),
    [2, 3],
  );
  assert.is(comparePositionsOf(results), true);
  // One refusal: nothing is appended, not even the part that was accepted.
  try {
    await runner.runTogether([part(a, counter, { add: 1, max: 10 }), part(b, counter, { add: 8, max: 10 })], context);
    assert.unreachable('over the limit');
  } catch (error) {
    assert.is((error as DomainError).code, 'over_limit');
  }
  assert.is((await store.readStream(a)).length, 1);
  // Racing writers on a shared stream: each decided again on the state the other left; the bound holds.
  const shared = `counter-${randomUUID()}`;
  const outcomes = await Promise.allSettled(
    Array.from({ length: 4 }, () =>
      runner.runTogether(
        [part(shared, counter, { add: 3, max: 10 }), part(`counter-${randomUUID()}`, counter, { add: 1, max: 10 })],
        context,
      ),
    ),
  );
  assert.is(outcomes.filter((o) => o.status === 'fulfilled').length, 3);
  assert.is((await store.readStream(shared)).length, 3);
});

/** Both parts of one runTogether call were appended in one transaction (the same commit). */
function comparePositionsOf(results: { appended: { position: { commit: bigint } } | null }[]): boolean {
  return results.every((r) => r.appended!.position.commit === results[0]!.appended!.position.commit);
}

test.run();
