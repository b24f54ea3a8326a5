// The web console's build stamp: a SHA-256 over the console's sources (web/console, without its
// build output and generated API types) and the lockfile. The build writes it next to what it
// built (dist/.build-stamp); `serve` recomputes it and, when the build is missing or stale,
// rebuilds before listening if Vite is installed (`consoleBuildDecision`, a pure function).

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../../infra/paths.ts';

export const CONSOLE_DIR = path.join(ROOT, 'web', 'console');
export const CONSOLE_DIST = path.join(CONSOLE_DIR, 'dist');
export const STAMP_FILE = '.build-stamp';

/** Not sources: build output, installed or generated files. */
const SKIP = new Set(['dist', 'node_modules', 'schema.d.ts']);
const skipped = (name: string) => SKIP.has(name) || name.startsWith('.');

function sourceFiles(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (skipped(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full, base));
    else if (entry.isFile()) files.push(path.relative(base, full).split(path.sep).join('/'));
  }
  return files.sort();
}

/** The stamp of the sources as they are now; null when there are no console sources. */
export function sourceStamp(consoleDir = CONSOLE_DIR, lockfile = path.join(ROOT, 'package-lock.json')): string | null {
  const files = sourceFiles(consoleDir);
  if (files.length === 0) return null;
  const hash = createHash('sha256');
  for (const file of files)
    hash
      .update(file)
      .update('\0')
      .update(readFileSync(path.join(consoleDir, file)))
      .update('\0');
  hash.update('package-lock.json\0');
  if (existsSync(lockfile)) hash.update(readFileSync(lockfile));
  return hash.digest('hex');
}

/** The stamp the build in `dist` was made from; null when there is no build. */
export function builtStamp(dist = CONSOLE_DIST): string | null {
  const file = path.join(dist, STAMP_FILE);
  if (!existsSync(file) || !existsSync(path.join(dist, 'index.html'))) return null;
  return readFileSync(file, 'utf8').trim() || null;
}

/** Whether Vite (a dev dependency) is installed: only then can this checkout build the console. */
export function viteInstalled(root = ROOT): boolean {
  return existsSync(path.join(root, 'node_modules', 'vite', 'package.json'));
}

export type ConsoleBuildDecision =
  | { action: 'serve'; reason: 'fresh' | 'no_sources' }
  | { action: 'rebuild'; reason: 'missing' | 'stale' }
  | { action: 'serve_as_is'; reason: 'stale_without_vite' }
  | { action: 'how_to_build'; reason: 'missing_without_vite' };

/**
 * What `serve` does about the console before listening. `sources`: the stamp of the sources
 * (null: no console sources, as in an image that ships only the build); `built`: the stamp of
 * the build (null: none).
 */
export function consoleBuildDecision(input: {
  sources: string | null;
  built: string | null;
  vite: boolean;
}): ConsoleBuildDecision {
  const { sources, built, vite } = input;
  if (sources === null)
    return built === null
      ? { action: 'how_to_build', reason: 'missing_without_vite' }
      : { action: 'serve', reason: 'no_sources' };
  if (built === sources) return { action: 'serve', reason: 'fresh' };
  if (vite) return { action: 'rebuild', reason: built === null ? 'missing' : 'stale' };
  return built === null
    ? { action: 'how_to_build', reason: 'missing_without_vite' }
    : { action: 'serve_as_is', reason: 'stale_without_vite' };
}
