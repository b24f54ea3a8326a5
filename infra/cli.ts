// `orchard <command>`: serve, migrate, rebuild, replay.

import { loadConfig } from './config.ts';
import { formatPosition } from './eventstore/position.ts';
import { keysRotate, runnerStatus } from './keys-cli.ts';
import { createLogger } from './logging.ts';
import { openPlatform } from './platform.ts';
import { SERVICES, startServices, type ServiceName } from './server.ts';

const USAGE = `usage: orchard <command>
  serve [orch|chat|registry|all]    run services (default all)
  migrate                           apply database migrations and exit
  rebuild <projection>|--all        empty a projection's tables and replay the log into them
  keys rotate <username>            rotate an account's API key (interactive terminal only)
  keys runner-status                VERIFIED (0), NOT VERIFIED (3) or CANNOT VERIFY (4) for the runner
  replay [--stream-prefix P] [--type T]...
                                    print the log as JSON lines (stream, revision, position, type, data, metadata)`;

function option(args: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === name && args[i + 1]) values.push(args[++i]!);
  return values;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  const config = loadConfig();
  // Commands that print data keep stdout for it; their logs go to stderr.
  const log = createLogger({ level: config.logLevel, sink: command === 'serve' ? undefined : (line) => process.stderr.write(line + '\n') });

  switch (command) {
    case 'serve': {
      const which = args[0] ?? 'all';
      const names: ServiceName[] = which === 'all' ? SERVICES : SERVICES.includes(which as ServiceName) ? [which as ServiceName] : [];
      if (names.length === 0) {
        process.stderr.write(`unknown service: ${which}\n${USAGE}\n`);
        return 2;
      }
      const platform = await openPlatform(config, log);
      const running = await startServices(platform, names);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      log.info('shutting_down');
      await Promise.all(running.map((s) => s.close()));
      await platform.close();
      return 0;
    }
    case 'migrate': {
      const platform = await openPlatform(config, log, { runProjections: false });
      await platform.close();
      return 0;
    }
    case 'rebuild': {
      const platform = await openPlatform(config, log, { runProjections: false });
      try {
        const names = args[0] === '--all' ? platform.engine.projections.map((p) => p.name) : args.slice(0, 1);
        if (names.length === 0) {
          process.stderr.write(`${USAGE}\n`);
          return 2;
        }
        for (const name of names) {
          const applied = await platform.engine.rebuild(name);
          process.stdout.write(JSON.stringify({ projection: name, events_applied: applied }) + '\n');
        }
      } finally {
        await platform.close();
      }
      return 0;
    }
    case 'replay': {
      const platform = await openPlatform(config, log, { runProjections: false });
      try {
        const prefixes = option(args, '--stream-prefix');
        const types = option(args, '--type');
        const filter = { streamPrefixes: prefixes, eventTypes: types };
        let after;
        for (;;) {
          const batch = await platform.store.readAll({ after, filter, limit: 500 });
          if (batch.length === 0) break;
          for (const e of batch) {
            process.stdout.write(JSON.stringify({
              stream: e.stream, revision: e.revision.toString(), position: formatPosition(e.position), id: e.id,
              type: e.type, data: e.data, metadata: e.metadata, created_at: e.created_at.toISOString(),
            }) + '\n');
          }
          after = batch.at(-1)!.position;
        }
      } finally {
        await platform.close();
      }
      return 0;
    }
    case 'keys': {
      if (args[0] === 'rotate') return keysRotate(config, log, args[1], process.stdout, process.stderr);
      if (args[0] === 'runner-status') return runnerStatus(config, log, process.stdout);
      process.stderr.write(`${USAGE}\n`);
      return 2;
    }
    default:
      process.stderr.write(`${USAGE}\n`);
      return command ? 2 : 0;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`orchard: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
