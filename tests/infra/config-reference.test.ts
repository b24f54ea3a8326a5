// docs/reference/configuration.md is made from the configuration's declarations; this fails
// when a declaration changed and the page was not regenerated.

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { configurationMarkdown, REFERENCE_PATH, REGENERATE } from '../../infra/config/reference.ts';
import { ENV_VARS } from '../../infra/config.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const test = suite('config: the generated reference');

test('docs/reference/configuration.md is up to date with the declarations', () => {
  const committed = readFileSync(path.join(root, REFERENCE_PATH), 'utf8');
  assert.ok(committed === configurationMarkdown(), `${REFERENCE_PATH} is stale: regenerate it with \`${REGENERATE}\``);
});

test('the reference lists every declared variable', () => {
  const page = configurationMarkdown();
  for (const name of Object.keys(ENV_VARS)) assert.ok(page.includes(`| \`${name}\` |`), name);
});

test.run();
