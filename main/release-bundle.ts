// A release's precompiled JavaScript: `orchard release bundle <dir>` compiles the CLI and every
// module it loads (ours; node_modules stay external) into `<dir>/dist/` once, at release time.
// bin/orchard.mjs runs dist/cli.js when it exists, so a release starts without tsx compiling
// the TypeScript sources on every cold start (the updater's swap starts the new release while
// the services are down: bench/updates.ts). esbuild is the transformer tsx itself uses, so the
// bundle means what the sources mean. Commands stay separate chunks, loaded on demand.
//
// Never in a working tree: a bundle left there would shadow later edits of the sources.

import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

export class BundleRefused extends Error {}

export async function bundleRelease(dir: string): Promise<{ outdir: string; files: number }> {
  const root = path.resolve(dir);
  if (existsSync(path.join(root, '.git'))) {
    throw new BundleRefused(
      `${root} is a git working tree: bundle a release's build directory (a copy of the sources), or the bundle would shadow later edits`,
    );
  }
  if (!existsSync(path.join(root, 'main', 'cli.ts')))
    throw new BundleRefused(`${root} holds no orchard sources (main/cli.ts)`);
  const outdir = path.join(root, 'dist');
  await rm(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: { cli: 'main/cli.ts' },
    outdir,
    bundle: true,
    splitting: true,
    packages: 'external',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    tsconfig: path.join(root, 'tsconfig.json'),
    metafile: true,
    logLevel: 'silent',
  });
  return { outdir, files: Object.keys(result.metafile.outputs).length };
}
