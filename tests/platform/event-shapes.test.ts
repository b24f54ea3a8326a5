// The log's contract, checked: the data shape of every event type and version the code declares
// equals the record in domain/event-shapes.json; an edit that changes a shape without a new
// version is refused (shown on a fixture module); every old-version fixture validates against its
// recorded shape and upcasts to the current one.

import { Ajv } from 'ajv';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVENT_CONTRACT, EVENT_TYPES } from '../../domain/events.ts';
import {
  checkShapes,
  declaredShapes,
  oldEventFixtures,
  readShapes,
  withNewShapes,
  type Shapes,
} from '../support/event-shapes.ts';

const versionOf = (type: string) => EVENT_CONTRACT.versionOf(type);

const test = suite<{ recorded: Shapes; declared: Shapes }>('event shapes');
test.before((ctx) => {
  ctx.recorded = readShapes();
  ctx.declared = declaredShapes(versionOf);
});

test('every declared shape is the recorded one', ({ recorded, declared }) => {
  assert.equal(checkShapes(recorded, declared, versionOf), []);
});

test('every catalog type has its current version recorded, and the record has no type the catalog lacks', ({
  recorded,
}) => {
  const missing = EVENT_TYPES.filter((type) => !recorded[type]?.[versionOf(type)]);
  assert.equal(missing, []);
  const extra = Object.keys(recorded).filter((type) => !EVENT_TYPES.includes(type));
  assert.equal(extra, []);
});

test('a shape changed without a version bump is refused, by type and version, with what to do', ({ recorded }) => {
  const edited = declaredShapes(versionOf, 'tests/fixtures/event-shapes/changed-events.ts');
  assert.ok(edited.MessageEdited?.[1], 'the fixture module declares MessageEdited');
  const problems = checkShapes(recorded, edited, versionOf).filter((p) => p.startsWith('MessageEdited'));
  assert.equal(problems, [
    'MessageEdited v1 changed shape without a new version: declare MessageEdited: 2 beside its union, keep the old data type as MessageEditedV1 and add an upcaster from 1',
  ]);
  // Recording does not paper over it: the --write command keeps the recorded shape.
  assert.equal(withNewShapes(recorded, edited).MessageEdited, recorded.MessageEdited);
});

test('a version bumped without its old shape on record is refused', ({ recorded, declared }) => {
  const bumped = (type: string) => (type === 'MessageEdited' ? 2 : versionOf(type));
  const { MessageEdited: _gone, ...rest } = recorded;
  const problems = checkShapes(
    { ...rest, MessageEdited: { 2: declared.MessageEdited![1]! } },
    { ...declared, MessageEdited: { 2: declared.MessageEdited![1]! } },
    bumped,
  );
  assert.equal(problems, ['MessageEdited is at v2 but v1 is not recorded']);
});

test('every old-version fixture validates against its recorded shape and upcasts to the current one', ({
  recorded,
}) => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const fixtures = oldEventFixtures();
  assert.ok(fixtures.length >= 2);
  const old = fixtures
    .flatMap(([, f]) => f.events)
    .filter((e) => e.schema < versionOf(e.type))
    .map((e) => `${e.type}@${e.schema}`);
  assert.equal(old.sort(), ['MessageDeleted@1', 'PollClosed@1'], 'each older version has a fixture');
  for (const [file, fixture] of fixtures) {
    for (const event of fixture.events) {
      const asStored = ajv.validate(recorded[event.type]![event.schema]!, event.data);
      assert.ok(asStored, `${file} ${event.type} v${event.schema} as stored: ${ajv.errorsText()}`);
      const lifted = EVENT_CONTRACT.upcast(event);
      assert.is(lifted.schema, versionOf(event.type));
      assert.ok(
        ajv.validate(recorded[event.type]![lifted.schema]!, lifted.data),
        `${file} ${event.type} upcast to v${lifted.schema}: ${ajv.errorsText()}`,
      );
    }
  }
});

test.run();
