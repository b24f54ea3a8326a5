// Upcasters lift old event shapes to the current one at read time, in the command handler's
// fold as in projections; the stored event is never rewritten.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Decider, DomainEvent } from '../../domain/shared/decider.ts';
import { CommandRunner, registerSchema } from '../../infra/commands.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { registerUpcaster, upcast } from '../../infra/eventstore/upcasters.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

// v1 `Renamed` carried `name`; v2 splits it into `first` and `last`; v3 adds `display`.
registerUpcaster('UpcastRenamed', 1, (d) => {
  const [first = '', last = ''] = String(d.name).split(' ');
  return { first, last };
});
registerUpcaster('UpcastRenamed', 2, (d) => ({ ...d, display: `${d.last}, ${d.first}` }));
registerSchema('UpcastRenamed', 3);

type Renamed = DomainEvent<'UpcastRenamed', { first: string; last: string; display: string }>;
const person: Decider<string | null, { display: string }, Renamed> = {
  initialState: () => null,
  evolve: (_, e) => e.data.display,
  decide: ({ display }, current) => (current === display ? [] : [{ type: 'UpcastRenamed', data: { first: '', last: '', display } }]),
};

const test = suite<{ db: TestDatabase; store: PostgresEventStore }>('upcasters');
test.before(async (ctx) => {
  ctx.db = await freshDatabase('upcasters');
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
});
test.after(async ({ db, store }) => {
  await store.close();
  await db.drop();
});

test('an old event is lifted through every step; a current one is left as it is', async ({ store }) => {
  const stream = `person-${randomUUID()}`;
  await store.append(stream, [{
    id: randomUUID(), type: 'UpcastRenamed', data: { name: 'Ada Lovelace' },
    metadata: { actor: { kind: 'system', id: null }, correlation_id: null, causation_id: null, schema: 1 },
  }], { expected: 'no_stream' });
  const [stored] = await store.readStream(stream);
  const lifted = upcast(stored!);
  assert.equal(lifted.data, { first: 'Ada', last: 'Lovelace', display: 'Lovelace, Ada' });
  assert.is(lifted.metadata.schema, 3);
  assert.equal(stored!.data, { name: 'Ada Lovelace' }, 'the stored event is untouched');
  const current = { ...stored!, data: { first: 'A', last: 'B', display: 'B, A' }, metadata: { ...stored!.metadata, schema: 3 } };
  assert.is(upcast(current), current);
});

test('the command handler folds upcast events, and writes new events at the current schema', async ({ store }) => {
  const stream = `person-${randomUUID()}`;
  await store.append(stream, [{
    id: randomUUID(), type: 'UpcastRenamed', data: { name: 'Grace Hopper' },
    metadata: { actor: { kind: 'system', id: null }, correlation_id: null, causation_id: null, schema: 1 },
  }], { expected: 'no_stream' });
  const context = { actor: { kind: 'system' as const, id: 'test' }, correlationId: null };
  const same = await new CommandRunner(store, async () => {}).run(stream, person, { display: 'Hopper, Grace' }, context);
  assert.is(same.appended, null); // the folded (upcast) state already says so
  await new CommandRunner(store, async () => {}).run(stream, person, { display: 'Hopper, G.' }, context);
  const [, written] = await store.readStream(stream);
  assert.is(written!.metadata.schema, 3);
});

test.run();
