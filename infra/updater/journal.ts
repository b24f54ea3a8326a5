// The sidecar's journal: one file of JSON lines per apply under ORCH_UPDATER_DATA_DIR/journal,
// each line fsynced before the step it records goes on. It is the apply's record of truth while
// the apply runs, since the database may be restored under it; a restarted sidecar reads it to
// resume. A torn last line (a crash mid-write) is ignored.

import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isTerminal, type ApplyState, type JournalEntry } from '../../domain/updates/apply.ts';
import type { Clock } from '../clock.ts';

export class Journal {
  private readonly entries = new Map<string, JournalEntry[]>();
  private readonly dir: string;

  constructor(
    dataDir: string,
    private readonly clock: Clock,
  ) {
    this.dir = path.join(dataDir, 'journal');
  }

  async load(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const file of (await readdir(this.dir)).filter((f) => f.endsWith('.jsonl'))) {
      const lines = (await readFile(path.join(this.dir, file), 'utf8')).split('\n').filter(Boolean);
      const parsed: JournalEntry[] = [];
      for (const line of lines) {
        try {
          parsed.push(JSON.parse(line) as JournalEntry);
        } catch {
          break; // a torn write: the step it began was never acted on
        }
      }
      if (parsed.length) this.entries.set(parsed[0]!.apply_id, parsed);
    }
  }

  has(applyId: string): boolean {
    return this.entries.has(applyId);
  }

  of(applyId: string): JournalEntry[] {
    return this.entries.get(applyId) ?? [];
  }

  /** Every apply, oldest first. */
  applies(): JournalEntry[][] {
    return [...this.entries.values()].sort((a, b) => a[0]!.at.localeCompare(b[0]!.at));
  }

  stateOf(applyId: string): ApplyState | null {
    return this.of(applyId).at(-1)?.state ?? null;
  }

  /** The applies not finished (at most one, unless a crash left one behind). */
  unfinished(): string[] {
    return this.applies()
      .filter((e) => !isTerminal(e.at(-1)!.state))
      .map((e) => e[0]!.apply_id);
  }

  /** A frozen apply no operator has unfrozen: while there is one, applies are refused. */
  frozen(): string | null {
    for (const entries of this.applies()) {
      if (entries.at(-1)!.state === 'frozen' && !entries.some((e) => e.type === 'unfrozen'))
        return entries[0]!.apply_id;
    }
    return null;
  }

  /** Append and fsync one step. */
  async record(
    applyId: string,
    type: string,
    state: ApplyState,
    data: Record<string, unknown> = {},
  ): Promise<JournalEntry> {
    const list = this.entries.get(applyId) ?? [];
    const entry: JournalEntry = {
      id: randomUUID(),
      apply_id: applyId,
      seq: list.length + 1,
      type,
      state,
      at: this.clock.now().toISOString(),
      data,
    };
    const file = path.join(this.dir, `${applyId}.jsonl`);
    if (!existsSync(this.dir)) await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const handle = await open(file, 'a', 0o600);
    try {
      await handle.write(JSON.stringify(entry) + '\n');
      await handle.sync();
    } finally {
      await handle.close();
    }
    list.push(entry);
    this.entries.set(applyId, list);
    return entry;
  }
}
