// Files under a directory, recursively, whose names end with `suffix`, sorted.

import { readdir } from 'node:fs/promises';
import path from 'node:path';

export async function filesUnder(dir: string, suffix: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(full, suffix)));
    else if (entry.name.endsWith(suffix)) found.push(full);
  }
  return found.sort();
}
