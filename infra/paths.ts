// The install's root: the directory holding package.json, infra/db/migrations and node_modules.
// Found from this module's own location, so it is the same whether the code runs from the
// TypeScript sources (infra/paths.ts) or from a release's precompiled bundle (dist/*.js).

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(): string {
  const here = fileURLToPath(import.meta.url);
  for (let dir = path.dirname(here); ;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${here}`);
    dir = up;
  }
}

export const ROOT = findRoot();
