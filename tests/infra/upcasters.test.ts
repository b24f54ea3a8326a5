// Upcasters lift old event shapes to the current one at read time, in the command handler's
// fold as in projections; the stored event is never rewritten. The contract is built from the
// slices' declarations and refuses an inconsistent one.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { messageDecider } from '../../domain/chat/messages/decider.ts';
import type { MessageEvent } from '../../domain/chat/messages/events.ts';
import { messageStream } from '../../domain/chat/streams.ts';
import { EVENT_CONTRACT } from '../../domain/events.ts';
import { eventContract, type Upcasters } from '../../domain/shared/event-contract.ts';
import { asDomainEvent, CommandRunner } from '../../infra/commands.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { upcastWith } from '../../infra/eventstore/upcasters.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

const SYSTEM = { actor: { kind: 'system' as const, id: null }, correlation_id: null, causation_id: null };

// v1 `Renamed` carried `name`; v2 splits it into `first` and `last`; v3 adds `display`.
const renamed: Upcasters = {
  Renamed: {
    1: (d) => {
      const [first = '', last = ''] = String(d.name).split(' ');
      return { first, last };
    },
    2: (d) => ({ ...d, display: `${d.last}, ${d.first}` }),
  },
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
  const contract = eventContract({ types: ['Renamed'], versions: { Renamed: 3 }, upcasters: [renamed] });
  const stream = `test_person-${randomUUID()}`;
  await store.append(
    stream,
    [{ id: randomUUID(), type: 'Renamed', data: { name: 'Ada Lovelace' }, metadata: { ...SYSTEM, schema: 1 } }],
    { expected: 'no_stream' },
  );
  const [stored] = await store.readStream(stream);
  const lifted = upcastWith(contract, stored!);
  assert.equal(lifted.data, { first: 'Ada', last: 'Lovelace', display: 'Lovelace, Ada' });
  assert.is(lifted.metadata.schema, 3);
  assert.equal(stored!.data, { name: 'Ada Lovelace' }, 'the stored event is untouched');
  const fromTwo = upcastWith(contract, {
    ...stored!,
    data: { first: 'A', last: 'B' },
    metadata: { ...stored!.metadata, schema: 2 },
  });
  assert.equal(fromTwo.data, { first: 'A', last: 'B', display: 'B, A' }, 'a version 2 event takes only the last step');
  const current = {
    ...stored!,
    data: { first: 'A', last: 'B', display: 'B, A' },
    metadata: { ...stored!.metadata, schema: 3 },
  };
  assert.is(upcastWith(contract, current), current);
});

test('an inconsistent declaration is refused when the contract is built', () => {
  assert.throws(
    () => eventContract({ types: ['Renamed'], versions: { Renamed: 4 }, upcasters: [renamed] }),
    /Renamed is at version 4 but has no upcaster from version 3/,
  );
  assert.throws(
    () => eventContract({ types: ['Renamed'], versions: { Renamed: 2 }, upcasters: [renamed] }),
    /upcaster for Renamed from version 2, but its current version is 2/,
  );
  assert.throws(
    () => eventContract({ types: ['Other'], versions: {}, upcasters: [renamed] }),
    /upcaster for Renamed, which no slice declares/,
  );
  assert.throws(
    () => eventContract({ types: ['Renamed'], versions: { Renamed: 3 }, upcasters: [renamed, renamed] }),
    /two upcasters for Renamed from version 1/,
  );
  assert.throws(
    () => eventContract({ types: [], versions: { Renamed: 1 }, upcasters: [] }),
    /version declared for Renamed, which is not in its union's type list/,
  );
});

test('the platform contract: MessageDeleted and PollClosed are at version 2, everything else at 1', () => {
  assert.is(EVENT_CONTRACT.versionOf('MessageDeleted'), 2);
  assert.is(EVENT_CONTRACT.versionOf('PollClosed'), 2);
  assert.is(EVENT_CONTRACT.versionOf('MessagePosted'), 1);
});

test('the command handler folds upcast events, and writes new events at the current version', async ({ store }) => {
  const messageId = randomUUID();
  const channelId = randomUUID();
  const sender = randomUUID();
  const stream = messageStream(messageId);
  const at = new Date().toISOString();
  await store.append(
    stream,
    [
      {
        id: randomUUID(),
        type: 'MessagePosted',
        metadata: { ...SYSTEM, schema: 1 },
        data: {
          message_id: messageId,
          channel_id: channelId,
          at,
          sender_id: sender,
          ciphertext: 'x',
          kind: 'text',
          thread_root_id: null,
          mentions: [],
          via_webhook: false,
          has_file: false,
        },
      },
      // As the code before version 2 wrote it: no sender_id.
      {
        id: randomUUID(),
        type: 'MessageDeleted',
        metadata: { ...SYSTEM, schema: 1 },
        data: { message_id: messageId, channel_id: channelId, at, by: sender },
      },
    ],
    { expected: 'no_stream' },
  );
  const [, deleted] = await store.readStream(stream);
  assert.equal(asDomainEvent<MessageEvent>(deleted!).data, {
    message_id: messageId,
    channel_id: channelId,
    at,
    by: sender,
    sender_id: null,
  });

  const id = randomUUID();
  const fresh = messageStream(id);
  const runner = new CommandRunner(store, async () => {});
  const context = { actor: { kind: 'user' as const, id: sender }, correlationId: null };
  await runner.run(
    fresh,
    messageDecider,
    {
      type: 'Post',
      message_id: id,
      channel_id: channelId,
      sender_id: sender,
      ciphertext: 'y',
      kind: 'text',
      thread_root_id: null,
      mentions: [],
      via_webhook: false,
      has_file: false,
      at,
    },
    context,
  );
  await runner.run(fresh, messageDecider, { type: 'Delete', actor_id: sender, moderator: false, at }, context);
  const written = await store.readStream(fresh);
  assert.equal(
    written.map((e) => [e.type, e.metadata.schema]),
    [
      ['MessagePosted', 1],
      ['MessageDeleted', 2],
    ],
  );
  assert.is(written[1]!.data.sender_id, sender);
});

test.run();
