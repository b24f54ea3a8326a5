// A process that runs one reactor and nothing else, for the two-process hand-over tests
// (tests/infra/reactor-handover.test.ts, tests/infra/push-reactor-handover.test.ts): the real
// reactor named by REACTOR on the processor engine, against DATABASE_URL:
//
// - `scheduled-poster` (the default): the scheduled-message poster;
// - `push-sender`: the web-push sender, with the server key SEAL_KEY (hex) and the VAPID keys
//   VAPID_KEYS (JSON), sending to loopback (a test push service).
//
// Each batch it is handed is first written down in `reactor_attempts` (event id, this pid, the
// batch's number), then the reactor acts after a pause (PAUSE_MS, default 150 ms), so a kill -9
// can land between a batch's start and its checkpoint. It prints `active` once it holds the
// reactor's lock. The parent's side: ./reactor-children.ts.

import { pushSender } from '../../api/chat/push/reactor.ts';
import { scheduledMessagePoster } from '../../api/chat/scheduled/reactor.ts';
import { systemClock } from '../../infra/clock.ts';
import { CommandRunner } from '../../infra/commands.ts';
import { createPool } from '../../infra/db/pool.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { createLogger } from '../../infra/logging.ts';
import { ProcessorEngine } from '../../infra/processors/engine.ts';
import type { Reactor } from '../../infra/processors/reactor.ts';

const url = process.env.DATABASE_URL!;
const pause = Number(process.env.PAUSE_MS ?? 150);
const pool = createPool(url, { max: 5 });
const store = new PostgresEventStore(pool, url);
const log = createLogger({ level: 'error', sink: (line) => process.stderr.write(`${line}\n`) });
const commands = new CommandRunner(store, async () => {});

function reactorNamed(name: string): Reactor {
  switch (name) {
    case 'scheduled-poster':
      return scheduledMessagePoster({ commands });
    case 'push-sender':
      return pushSender({
        db: pool,
        commands,
        sealKey: Buffer.from(process.env.SEAL_KEY!, 'hex'),
        vapid: { subject: 'mailto:ops@orchard.test', keys: JSON.parse(process.env.VAPID_KEYS!) },
        policy: { allowLoopback: true, dnsServers: [] },
        clock: systemClock,
        log,
      });
    default:
      throw new Error(`reactor-process: no reactor ${name}`);
  }
}

const reactor = reactorNamed(process.env.REACTOR ?? 'scheduled-poster');
let batch = 0;
const engine = new ProcessorEngine(store, pool, [], log);
engine.register([
  {
    ...reactor,
    async react(events) {
      batch += 1;
      await pool.query('INSERT INTO reactor_attempts (event_id, pid, batch) SELECT unnest($1::uuid[]), $2, $3', [
        events.map((e) => e.id),
        process.pid,
        batch,
      ]);
      await new Promise((r) => setTimeout(r, pause));
      await reactor.react(events);
    },
  },
]);
engine.start();
const watch = setInterval(() => {
  if (!engine.isActive(reactor.name)) return;
  process.stdout.write('active\n');
  clearInterval(watch);
}, 20);
