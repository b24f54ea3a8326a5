// The layout holds (DESIGN.md "Layout"): dependencies point one way, main → api → projections →
// infra → domain / crypto. A test reads every source file's imports, so a wrong-way import fails
// here rather than in review.

import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { filesUnder } from '../support/files.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** What each top-level folder may import from the others. */
const ALLOWED: Record<string, string[]> = {
  main: ['api', 'projections', 'infra', 'domain', 'crypto'],
  api: ['projections', 'infra', 'domain', 'crypto'],
  projections: ['infra', 'domain'],
  infra: ['domain', 'crypto'],
  domain: [],
  crypto: [],
};

const test = suite('layout: dependencies point one way');

test('no folder imports one it must not (infra never imports api, projections or main)', async () => {
  const wrong: string[] = [];
  for (const [folder, allowed] of Object.entries(ALLOWED)) {
    for (const file of await filesUnder(path.join(ROOT, folder), '.ts')) {
      const text = await readFile(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
        const target = path.relative(ROOT, path.resolve(path.dirname(file), specifier!)).split(path.sep)[0]!;
        if (target !== folder && target in ALLOWED && !allowed.includes(target)) wrong.push(`${path.relative(ROOT, file)} imports ${specifier}`);
      }
    }
  }
  assert.equal(wrong, []);
});

test('the check sees imports (it would fail on a wrong-way one)', async () => {
  // infra/db/migrate.ts imports './pool.ts'; make sure the pattern matches real import lines.
  const text = await readFile(path.join(ROOT, 'infra/db/migrate.ts'), 'utf8');
  assert.ok([...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].length > 0);
});

test('every slice has one name in three roots: a domain folder has its projection file and its api folder', async () => {
  for (const service of ['orchestration', 'registry', 'chat']) {
    for (const entry of await readdir(path.join(ROOT, 'domain', service), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const slice = entry.name;
      // A slice names its events; it has a decider unless its events go on another slice's stream
      // (knowledge snippets are decided by the profile stream's decider).
      const files = await readdir(path.join(ROOT, 'domain', service, slice));
      assert.ok(files.includes('decider.ts') || files.includes('events.ts'), `domain/${service}/${slice}/decider.ts or events.ts`);
      assert.ok((await readdir(path.join(ROOT, 'projections', service))).includes(`${slice}.ts`), `projections/${service}/${slice}.ts`);
      assert.ok((await readdir(path.join(ROOT, 'api', service, slice))).includes('routes.ts'), `api/${service}/${slice}/routes.ts`);
    }
  }
});

test.run();
