// A process that runs one reactor and nothing else, for the two-process hand-over test
// (tests/infra/reactor-handover.test.ts): the real scheduled-message poster on the processor
// engine, against DATABASE_URL. Each batch it is handed is first written down in
// `reactor_attempts` (event id, this pid, the batch's number), then the poster acts after a short
// pause, so a kill -9 can land between a batch's start and its checkpoint. It prints `active`
// once it holds the reactor's lock.

import { scheduledMessagePoster } from '../../api/chat/scheduled/reactor.ts';
import { CommandRunner } from '../../infra/commands.ts';
import { createPool } from '../../infra/db/pool.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { createLogger } from '../../infra/logging.ts';
import { ProcessorEngine } from '../../infra/processors/engine.ts';

const url = process.env.DATABASE_URL!;
const pool = createPool(url, { max: 5 });
const store = new PostgresEventStore(pool, url);
const poster = scheduledMessagePoster({ commands: new CommandRunner(store, async () => {}) });
let batch = 0;
const engine = new ProcessorEngine(store, pool, [], createLogger({ level: 'error', sink: (line) => process.stderr.write(`${line}\n`) }));
engine.register([{
  ...poster,
  async react(events) {
    batch += 1;
    await pool.query('INSERT INTO reactor_attempts (event_id, pid, batch) SELECT unnest($1::uuid[]), $2, $3', [events.map((e) => e.id), process.pid, batch]);
    await new Promise((r) => setTimeout(r, 150));
    await poster.react(events);
  },
}]);
engine.start();
const watch = setInterval(() => {
  if (!engine.isActive(poster.name)) return;
  process.stdout.write('active\n');
  clearInterval(watch);
}, 20);
