// Releases built from the working tree for the process runtime's e2e suite: the sources with
// package.json at a chosen version, extra migrations, precompiled as a release is
// (`orchard release bundle`: dist/), packed as the tar.gz artifact a manifest names (without
// node_modules: the sidecar links its own).

import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';
import { bundleRelease } from '../../main/release-bundle.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SOURCES = ['bin', 'api', 'crypto', 'domain', 'infra', 'main', 'projections', 'package.json', 'tsconfig.json'];

export interface Release {
  version: string;
  file: string;
  sha256: string;
  migrations: string[];
}

export async function buildRelease(
  workDir: string,
  version: string,
  extraMigrations: Record<string, string> = {},
): Promise<Release> {
  const dir = path.join(workDir, `build-${version}`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const entry of SOURCES) await cp(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  const pkg = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'));
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...pkg, version }, null, 2));
  for (const [name, sql] of Object.entries(extraMigrations))
    await writeFile(path.join(dir, 'infra/db/migrations', name), sql);
  await bundleRelease(dir);
  const file = path.join(workDir, `orchard-${version}.tar.gz`);
  await tar.c({ gzip: true, file, cwd: dir, portable: true }, ['.']);
  const sha256 = createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
  const { readdir } = await import('node:fs/promises');
  const migrations = (await readdir(path.join(dir, 'infra/db/migrations')))
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort()
    .map((f) => f.replace(/\.sql$/, ''));
  await rm(dir, { recursive: true, force: true });
  return { version, file, sha256, migrations };
}

export async function unpackRelease(release: Release, releasesDir: string): Promise<void> {
  const target = path.join(releasesDir, release.version);
  await mkdir(target, { recursive: true });
  await tar.x({ file: release.file, cwd: target });
  await symlink(path.join(ROOT, 'node_modules'), path.join(target, 'node_modules'));
}
