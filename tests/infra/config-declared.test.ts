// Every environment variable the code reads is declared in infra/config/ (so it is parsed,
// documented and shown by `orchard config`). The non-test sources are scanned for
// `process.env.NAME`, `process.env['NAME']`, `env.NAME` and `env['NAME']` reads of UPPER_CASE
// names; the configuration itself reads through its declarations, so these are the reads that
// bypass it.

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ENV_VARS } from '../../infra/config.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCE_DIRS = ['api', 'domain', 'infra', 'main', 'projections', 'crypto', 'bin'];
/** The operating system's, not orchard's: passed through to child processes or used as a fallback. */
const SYSTEM_VARS = new Set(['PATH', 'USER', 'HOME']);

const READ = /\benv(?:\.([A-Z][A-Z0-9_]*)\b|\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\])/g;

/** The UPPER_CASE names `text` reads from an env object. */
function reads(text: string): string[] {
  return [...text.matchAll(READ)].map((m) => m[1] ?? m[2]!);
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(full);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [full] : [];
  });
}

const test = suite('config: every variable read is declared');

test('the scan sees each spelling of a read', () => {
  assert.equal(
    reads(
      `process.env.ONE; process.env['TWO']; env.THREE; env["FOUR"]; options.env.FIVE; env.lower; process.env[name]; environment.SIX`,
    ),
    ['ONE', 'TWO', 'THREE', 'FOUR', 'FIVE'],
  );
});

test('every UPPER_CASE variable read in api, domain, infra, main, projections, crypto and bin is declared', () => {
  const undeclared: string[] = [];
  let seen = 0;
  for (const dir of SOURCE_DIRS) {
    for (const file of sources(path.join(root, dir))) {
      for (const name of reads(readFileSync(file, 'utf8'))) {
        seen++;
        if (!Object.hasOwn(ENV_VARS, name) && !SYSTEM_VARS.has(name))
          undeclared.push(`${path.relative(root, file)}: ${name}`);
      }
    }
  }
  assert.ok(seen > 0, 'the scan found reads (main/cli.ts reads LOG_LEVEL)');
  assert.equal(undeclared, [], 'declare these in infra/config/ (or read them through loadConfig)');
});

test.run();
