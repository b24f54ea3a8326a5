// Old events, as the code of their day stored them (tests/fixtures/events), read by the code of
// today: appended to a real log exactly as stored (old `metadata.schema`, old data), they are
// applied by every projection and reactor that consumes their types without error, folded by
// their aggregate's decider, and the consumer that needs what an upcaster cannot supply (the chat
// admin audit log) behaves as its contract says.

import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { messageDecider } from '../../domain/chat/messages/decider.ts';
import type { MessageEvent } from '../../domain/chat/messages/events.ts';
import { messageStream } from '../../domain/chat/streams.ts';
import { pollDecider } from '../../domain/chat/polls/decider.ts';
import type { PollEvent } from '../../domain/chat/polls/events.ts';
import { EVENT_CONTRACT } from '../../domain/events.ts';
import { fold } from '../../domain/shared/decider.ts';
import { asDomainEvent } from '../../infra/commands.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { loggedEvents, startTestApps, type TestServices } from '../support/services.ts';
import { oldEventFixtures } from '../support/event-shapes.ts';

const test = suite<{ services: TestServices; appended: Map<string, RecordedEvent[]> }>('old event fixtures');
test.before(async (ctx) => {
  ctx.services = await startTestApps('event-fixtures');
  ctx.appended = new Map();
  const { store, engine } = ctx.services.platform;
  for (const [file, fixture] of oldEventFixtures()) {
    for (const e of fixture.events) {
      await store.append(
        e.stream,
        [
          {
            id: randomUUID(),
            type: e.type,
            data: e.data,
            metadata: { actor: { kind: 'user', id: null }, correlation_id: null, causation_id: null, schema: e.schema },
          },
        ],
        { expected: 'any' },
      );
    }
    const streams = [...new Set(fixture.events.map((e) => e.stream))];
    const recorded = (await Promise.all(streams.map((s) => store.readStream(s)))).flat();
    ctx.appended.set(file, recorded);
    await engine.waitForEvents(
      recorded.map((r) => ({ type: r.type, position: r.position })),
      15_000,
    );
  }
});
test.after(async ({ services }) => services.close());

test("every processor consuming the fixtures' types applied them without an error", ({ services, appended }) => {
  const types = new Set([...appended.values()].flat().map((e) => e.type));
  const consumers = services.platform.engine.processors.filter((p) => p.handles.some((t) => types.has(t)));
  assert.ok(consumers.some((p) => p.name === 'chat_admin_audit'));
  assert.ok(consumers.length >= 4, `consumers: ${consumers.map((p) => p.name)}`);
  for (const p of consumers)
    assert.equal(services.platform.engine.health(p.name), { errors: 0, lastErrorAt: null, lastError: null }, p.name);
});

test('the old message deletion: the stored event is untouched, its decider folds it, the read model hides the message', async ({
  services,
  appended,
}) => {
  const events = appended.get('MessageDeleted.v1.json')!;
  const deleted = events.find((e) => e.type === 'MessageDeleted')!;
  assert.is(deleted.metadata.schema, 1);
  assert.not.ok('sender_id' in deleted.data);
  const state = fold(
    messageDecider,
    events.map((e) => asDomainEvent<MessageEvent>(e)),
  );
  assert.ok(state.deleted);
  const { rows } = await services.platform.pool.query(
    'SELECT deleted_at IS NOT NULL AS deleted FROM chat_messages WHERE id = $1',
    [deleted.data.message_id],
  );
  assert.equal(rows, [{ deleted: true }]);
});

test('the old poll close: folded as closed, the poll read model closed, by whom it says', async ({
  services,
  appended,
}) => {
  const events = appended.get('PollClosed.v1.json')!;
  const closed = events.find((e) => e.type === 'PollClosed')!;
  const state = fold(
    pollDecider,
    events.map((e) => asDomainEvent<PollEvent>(e)),
  );
  assert.ok(state.closed);
  const { rows } = await services.platform.pool.query(
    'SELECT closed_at IS NOT NULL AS closed, closed_by FROM chat_polls WHERE id = $1',
    [closed.data.poll_id],
  );
  assert.equal(rows, [{ closed: true, closed_by: closed.data.closed_by }]);
});

test("the admin audit log leaves out a moderator's deletion or close on a version 1 event: whose message or poll it was is unknown", async ({
  services,
  appended,
}) => {
  const ids = [...appended.values()]
    .flat()
    .flatMap((e) => [e.data.message_id, e.data.poll_id])
    .filter(Boolean);
  const { rows } = await services.platform.pool.query('SELECT action FROM chat_admin_audit WHERE target_id = ANY($1)', [
    ids,
  ]);
  assert.equal(rows, []);
});

test("every event the platform itself appended carries its type's current version in metadata.schema", async ({
  services,
  appended,
}) => {
  const { commands } = services.platform;
  const id = randomUUID();
  const sender = randomUUID();
  const context = { actor: { kind: 'user' as const, id: sender }, correlationId: null };
  const at = new Date().toISOString();
  await commands.run(
    messageStream(id),
    messageDecider,
    {
      type: 'Post',
      message_id: id,
      channel_id: randomUUID(),
      sender_id: sender,
      ciphertext: 'x',
      kind: 'text',
      thread_root_id: null,
      mentions: [],
      via_webhook: false,
      has_file: false,
      at,
    },
    context,
  );
  await commands.run(
    messageStream(id),
    messageDecider,
    { type: 'Delete', actor_id: sender, moderator: false, at },
    context,
  );
  const fixtures = new Set([...appended.values()].flat().map((e) => e.id));
  const written = (await loggedEvents(services.platform)).filter((e) => !fixtures.has(e.id));
  assert.ok(written.some((e) => e.type === 'MessageDeleted' && e.metadata.schema === 2));
  assert.equal(
    written
      .filter((e) => e.metadata.schema !== EVENT_CONTRACT.versionOf(e.type))
      .map((e) => [e.type, e.metadata.schema]),
    [],
  );
});

test.run();
