// `node --import tsx main/docs-streams.ts [--write]`: print docs/reference/streams.md as generated
// from the stream tables (domain/streams-reference.ts), or write it (`--write`).

import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { STREAMS_REFERENCE_FILE, streamsMarkdown } from '../domain/streams-reference.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const text = streamsMarkdown();
if (process.argv.includes('--write')) {
  const file = path.join(root, STREAMS_REFERENCE_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
  process.stderr.write(`wrote ${STREAMS_REFERENCE_FILE}\n`);
} else {
  process.stdout.write(text);
}
