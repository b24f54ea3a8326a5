// Every event type the domain declares has a consumer: a projection that handles it, or an
// entry in AUDIT_ONLY saying why none does. And nothing consumes a type no union declares.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AUDIT_ONLY, EVENT_TYPES } from '../../domain/events.ts';
import { allProjections } from '../../projections/index.ts';

const test = suite('event catalog');

const consumed = new Set(allProjections.flatMap((p) => [...p.handles]));

test('every declared event type is consumed by a projection or marked audit-only', () => {
  const orphans = EVENT_TYPES.filter((type) => !consumed.has(type) && !(type in AUDIT_ONLY));
  assert.equal(orphans, []);
});

test('audit-only types are declared and really unconsumed', () => {
  for (const type of Object.keys(AUDIT_ONLY)) {
    assert.ok(EVENT_TYPES.includes(type), `${type} is not declared by any union`);
    assert.not.ok(
      consumed.has(type),
      `${type} is marked audit-only but ${allProjections.find((p) => p.handles.includes(type))?.name} consumes it`,
    );
  }
});

test('projections consume only declared types, and projection names are unique', () => {
  assert.equal(
    [...consumed].filter((type) => !EVENT_TYPES.includes(type)),
    [],
  );
  const names = allProjections.map((p) => p.name);
  assert.equal(names.length, new Set(names).size);
});

test('event type names are PascalCase past tense and unique', () => {
  assert.equal(EVENT_TYPES.length, new Set(EVENT_TYPES).size);
  // DESIGN.md names IntegrationRevokedExternally itself (a past participle followed by an adverb).
  const NAMED_BY_THE_DESIGN = new Set(['IntegrationRevokedExternally']);
  for (const type of EVENT_TYPES)
    if (!NAMED_BY_THE_DESIGN.has(type)) assert.match(type, /^[A-Z][A-Za-z]+(ed|Started|Ended|Failed|Refused)$/, type);
});

test.run();
