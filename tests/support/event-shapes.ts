// The shape of every event type's data, per version, as JSON Schema generated from the TypeScript
// unions the slices declare (ts-json-schema-generator): the current version from the union, an
// older one from the type its slice keeps for its upcaster (`MessageDeletedV1`). The shapes are
// recorded in domain/event-shapes.json; `checkShapes` compares what the code declares today with
// the record, so a shape that changes without a new version (and an upcaster) fails a test.
//
//   node --import tsx tests/event-shapes.ts --write    records new types and versions

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGenerator } from 'ts-json-schema-generator';

type Schema = Record<string, unknown>;
/** Type → version → the JSON Schema of its data. */
export type Shapes = Record<string, Record<string, Schema>>;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SHAPES_FILE = path.join(root, 'domain', 'event-shapes.json');
/** Where the unions and the older versions' types are declared. */
export const EVENT_SOURCES = 'domain/**/{events,reservation}.ts';

export const readShapes = (file = SHAPES_FILE): Shapes => JSON.parse(readFileSync(file, 'utf8')) as Shapes;

/** Stable JSON: keys sorted, so a record diffs line by line and compares as text. */
export function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Schema)[k])]),
    );
  }
  return value;
}

export const shapesText = (shapes: Shapes): string => `${JSON.stringify(canonical(shapes), null, 2)}\n`;

/** Inline every `$ref` (the shapes are small and not recursive) and sort `required`, so a schema stands alone. */
function inline(schema: unknown, definitions: Record<string, unknown>, seen: string[] = []): unknown {
  if (Array.isArray(schema)) return schema.map((s) => inline(s, definitions, seen));
  if (!schema || typeof schema !== 'object') return schema;
  const s = schema as Schema;
  if (typeof s.$ref === 'string') {
    const name = decodeURIComponent(s.$ref.replace('#/definitions/', ''));
    if (seen.includes(name)) throw new Error(`recursive event data type ${name}: not supported`);
    return inline(definitions[name], definitions, [...seen, name]);
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(s)) {
    if (key === 'description' || key === '$comment') continue; // annotations, not shape
    if (key === 'required' && Array.isArray(value)) out[key] = [...(value as string[])].sort();
    // A map of names to schemas: the names are data (a field may be called `description`).
    else if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, property]) => [name, inline(property, definitions, seen)]),
      );
    } else out[key] = inline(value, definitions, seen);
  }
  return out;
}

/**
 * What the code declares today: per event type, the current version's data shape (from its
 * union) and any older version whose type the slice still exports as `<Type>V<n>`.
 * `versionOf` gives each type's current version. `sources` is a glob (tests point it elsewhere).
 */
export function declaredShapes(
  versionOf: (type: string) => number,
  sources = EVENT_SOURCES,
  tsconfig = path.join(root, 'tsconfig.json'),
): Shapes {
  const generator = createGenerator({
    path: path.isAbsolute(sources) ? sources : path.join(root, sources),
    tsconfig,
    type: '*',
    expose: 'export',
    topRef: true,
    jsDoc: 'none',
    skipTypeCheck: true,
    additionalProperties: false,
  });
  const definitions = (generator.createSchema('*').definitions ?? {}) as Record<string, Schema>;
  const shapes: Shapes = {};
  const record = (type: string, version: number, schema: unknown) => {
    const byVersion = (shapes[type] ??= {});
    const text = JSON.stringify(canonical(schema));
    if (byVersion[version] && JSON.stringify(byVersion[version]) !== text)
      throw new Error(`${type} v${version} is declared twice with different shapes`);
    byVersion[version] = canonical(schema) as Schema;
  };
  const events = new Map<string, Schema>();
  for (const [name, definition] of Object.entries(definitions)) {
    const event = /^DomainEvent<"(\w+)",/.exec(name);
    if (event)
      record(event[1]!, versionOf(event[1]!), inline((definition.properties as Schema | undefined)?.data, definitions));
    if (event) events.set(event[1]!, definition);
  }
  // An older version: an exported type named for a declared event type and the version.
  for (const [name, definition] of Object.entries(definitions)) {
    const older = /^(\w+)V(\d+)$/.exec(name);
    if (older && events.has(older[1]!)) record(older[1]!, Number(older[2]), inline(definition, definitions));
  }
  return shapes;
}

/**
 * The problems, one line each, between the record and what the code declares:
 * - a recorded version whose shape changed (the version must go up, with an upcaster);
 * - a type or version the record lacks (run the --write command);
 * - a recorded type the code no longer declares (the log still holds its events);
 * - a current version past 1 with an older version not in the record (nothing to check its fixtures against).
 */
export function checkShapes(recorded: Shapes, declared: Shapes, versionOf: (type: string) => number): string[] {
  const problems: string[] = [];
  for (const [type, byVersion] of Object.entries(declared)) {
    for (const [version, shape] of Object.entries(byVersion)) {
      const was = recorded[type]?.[version];
      if (!was)
        problems.push(`${type} v${version} is not recorded: run \`node --import tsx tests/event-shapes.ts --write\``);
      else if (JSON.stringify(canonical(was)) !== JSON.stringify(canonical(shape))) {
        problems.push(
          `${type} v${version} changed shape without a new version: declare ${type}: ${Number(version) + 1} beside its union, keep the old data type as ${type}V${version} and add an upcaster from ${version}`,
        );
      }
    }
  }
  for (const [type, byVersion] of Object.entries(recorded)) {
    if (!declared[type])
      problems.push(`${type} is recorded but no longer declared: the log still holds its events, keep the type`);
    for (let v = 1; v < versionOf(type); v++) {
      if (!byVersion[v]) problems.push(`${type} is at v${versionOf(type)} but v${v} is not recorded`);
    }
  }
  return problems;
}

/** The record with every declared shape it lacks added; never replaces a recorded one (that is what `checkShapes` refuses). */
export function withNewShapes(recorded: Shapes, declared: Shapes): Shapes {
  const out: Shapes = structuredClone(recorded);
  for (const [type, byVersion] of Object.entries(declared)) {
    for (const [version, shape] of Object.entries(byVersion)) (out[type] ??= {})[version] ??= shape;
  }
  return out;
}

/** An old-version fixture: a short history as the code of its day stored it (tests/fixtures/events). */
export interface OldEventFixture {
  about: string;
  events: { stream: string; type: string; schema: number; data: Record<string, unknown> }[];
}

export const oldEventFixtures = (
  dir = path.join(root, 'tests', 'fixtures', 'events'),
): [file: string, fixture: OldEventFixture][] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => [f, JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as OldEventFixture]);
