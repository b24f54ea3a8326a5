// docs/reference/configuration.md, made from the declarations: one table per section. The test
// tests/infra/config-reference.test.ts fails when the committed page differs from this.

import { envVarMeta } from './kinds.ts';
import { SECTIONS } from './sections.ts';

export const REFERENCE_PATH = 'docs/reference/configuration.md';
export const REGENERATE = 'node --import tsx main/docs-config.ts --write';

/** A table cell: pipes escaped, so a `|` default or description does not split the row. */
const cell = (text: string) => text.replace(/\|/g, '\\|');

export function configurationMarkdown(): string {
  const lines = [
    '# Configuration reference',
    '',
    `<!-- Generated from infra/config/ by \`${REGENERATE}\`; edit the declarations, not this page. -->`,
    '',
    'Every setting is an environment variable. A blank value counts as unset. A secret given both',
    'directly and as `<NAME>_FILE` uses the direct value; the file is read only without it.',
    "Secrets (marked yes) are never printed: `orchard config` shows every variable's effective value",
    'and where it came from, with secrets redacted.',
  ];
  for (const section of SECTIONS) {
    lines.push('', `## ${section.title}`, '', '| variable | default | description | secret |', '|---|---|---|---|');
    for (const [name, schema] of Object.entries(section.vars)) {
      const meta = envVarMeta.get(schema)!;
      const fallback = meta.default === undefined ? '' : meta.default === '' ? '(empty)' : `\`${meta.default}\``;
      lines.push(`| \`${name}\` | ${cell(fallback)} | ${cell(meta.description)} | ${meta.secret ? 'yes' : 'no'} |`);
    }
  }
  return lines.join('\n') + '\n';
}
