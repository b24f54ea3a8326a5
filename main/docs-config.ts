// Prints docs/reference/configuration.md as the declarations make it; `--write` writes it there.
// `node --import tsx main/docs-config.ts --write`

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configurationMarkdown, REFERENCE_PATH } from '../infra/config/reference.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.argv.includes('--write')) {
  writeFileSync(path.join(root, REFERENCE_PATH), configurationMarkdown());
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
} else {
  process.stdout.write(configurationMarkdown());
}
