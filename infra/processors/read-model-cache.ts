// An in-process cache of read-model rows looked up on every request (the account behind an API
// key, the session behind a token). It is trusted only while this process runs every projection
// it watches: then each change to those read models is committed here, and the engine tells the
// cache (clearing it) before any read-your-writes wait on the change resolves, so a rotated key
// or a revoked session is refused on the very next request. A process standing by for those
// projections reads the database every time. A generation counter keeps a lookup that raced
// with a change from storing what it read before the change.

import type { Clock } from '../clock.ts';
import type { ProcessorEngine } from './engine.ts';

const MAX_ENTRIES = 10_000;

export class ReadModelCache<Row> {
  private readonly entries = new Map<string, { row: Row | null; until: number }>();
  private generation = 0;

  constructor(
    private readonly engine: Pick<ProcessorEngine, 'committed' | 'isActive'>,
    private readonly watched: readonly string[],
    /** Entries also age out after `maxAgeMs` on `clock`, when given (time-based expiry within that bound). */
    private readonly ageing: { clock: Clock; maxAgeMs: number } | null = null,
  ) {
    const clear = (projection: string) => {
      if (watched.includes(projection)) {
        this.generation += 1;
        this.entries.clear();
      }
    };
    engine.committed.on('batch', ({ projection }) => clear(projection));
    engine.committed.on('activity', clear);
  }

  private get trusted(): boolean {
    return this.watched.every((name) => this.engine.isActive(name));
  }

  /** The row for `key`, loading it with `load` on a miss; `expiresAt` (ms) bounds how long a loaded row is served. */
  async get(key: string, load: () => Promise<Row | null>, expiresAt?: (row: Row) => number): Promise<Row | null> {
    if (!this.trusted) return load();
    const now = this.ageing?.clock.now().getTime() ?? 0;
    const hit = this.entries.get(key);
    if (hit && hit.until > now) return hit.row;
    const generation = this.generation;
    const row = await load();
    if (generation === this.generation && this.trusted) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      const aged = this.ageing ? now + this.ageing.maxAgeMs : Infinity;
      this.entries.set(key, { row, until: Math.min(aged, row && expiresAt ? expiresAt(row) : Infinity) });
    }
    return row;
  }
}
