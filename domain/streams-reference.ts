// docs/reference/streams.md, generated from the stream tables (domain/streams.ts):
// `node --import tsx main/docs-streams.ts --write` writes it, and a test fails when it is stale.

import type { Service } from './shared/streams.ts';
import { STREAM_TABLES } from './streams.ts';

export const STREAMS_REFERENCE_FILE = 'docs/reference/streams.md';

const SERVICE_TITLES: Record<Service, string> = {
  orch: 'Orchestration (`orch.*`)',
  chat: 'Chat (`chat.*`)',
  registry: 'Registry (`registry.*`)',
  platform: 'Managed updates, shared by the services (`platform.*`)',
};

const SOURCES: Record<Service, string> = {
  orch: 'domain/orchestration/streams.ts',
  chat: 'domain/chat/streams.ts',
  registry: 'domain/registry/streams.ts',
  platform: 'domain/updates/streams.ts',
};

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

export function streamsMarkdown(): string {
  const lines = [
    '# Stream categories',
    '',
    '<!-- Generated from domain/*/streams.ts by `node --import tsx main/docs-streams.ts --write`; do not edit by hand. -->',
    '',
    'Every event is appended to a stream named `<category>-<id>`. A category is `<service>.<aggregate>`',
    '(`orch`, `chat`, `registry`, or `platform` for the managed updates every service shares): the part',
    "of the stream's name before its first `-`, as EventStoreDB's `$by_category` reads it. Ids made of",
    'several parts join them with `_`.',
    '',
    '**Categories are a public contract from 1.0 on.** Auditors and `readAll` filters select on them',
    '(`GET /api/v1/admin/events?category=`, `orchard replay --category`, `orchard audit export',
    '--category`), so renaming a category after 1.0 needs a migration of the log and of every',
    'filter that names it. Adding a category, or an event type to one, does not.',
    '',
    'Each service declares its categories in one table; the stream names in the code come from there',
    'only (a test scans the sources for any other).',
  ];
  for (const [service, table] of Object.entries(STREAM_TABLES) as [Service, (typeof STREAM_TABLES)[Service]][]) {
    lines.push(
      '',
      `## ${SERVICE_TITLES[service]}`,
      '',
      `Declared in \`${SOURCES[service]}\`.`,
      '',
      '| Category | Id | Events | Description |',
      '| --- | --- | --- | --- |',
    );
    for (const c of Object.values(table)) {
      lines.push(
        `| \`${c.category}\` | ${cell(c.id)} | ${c.events.map((e) => `\`${e}\``).join(', ')} | ${cell(c.description)} |`,
      );
    }
  }
  return lines.join('\n') + '\n';
}
