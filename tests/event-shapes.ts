// Records the data shape of every event type and version the code declares that
// domain/event-shapes.json does not hold yet (see tests/support/event-shapes.ts). It never
// changes a recorded shape: a shape that changed needs a new version, and this says so.
//
//   node --import tsx tests/event-shapes.ts           check, as the test does
//   node --import tsx tests/event-shapes.ts --write   record new types and versions

import { existsSync, writeFileSync } from 'node:fs';
import { EVENT_CONTRACT } from '../domain/events.ts';
import {
  checkShapes,
  declaredShapes,
  readShapes,
  SHAPES_FILE,
  shapesText,
  withNewShapes,
} from './support/event-shapes.ts';

const versionOf = (type: string) => EVENT_CONTRACT.versionOf(type);
const declared = declaredShapes(versionOf);
const recorded = existsSync(SHAPES_FILE) ? readShapes() : {};
if (process.argv.includes('--write')) writeFileSync(SHAPES_FILE, shapesText(withNewShapes(recorded, declared)));
const problems = checkShapes(process.argv.includes('--write') ? readShapes() : recorded, declared, versionOf);
for (const problem of problems) console.error(problem);
console.log(`${Object.keys(declared).length} event types; ${problems.length} problems`);
process.exitCode = problems.length ? 1 : 0;
