// `orchard <command>`: serve, migrate, rebuild, replay, openapi, keys.

import { loadConfig } from '../infra/config.ts';
import { formatPosition } from '../infra/eventstore/position.ts';
import { createLogger } from '../infra/logging.ts';
import { StartupError } from '../infra/startup-error.ts';
import { SERVICES, type ServiceName } from './apps.ts';
import { keysRotate, runnerStatus } from './keys.ts';
import { SET_REPLY_MODE_USAGE, setReplyModeCommand } from './profiles.ts';
import { offlineDocument } from './openapi.ts';
import { openPlatform } from './platform.ts';
import { announcement, lockDataDir, startServices } from './serve.ts';

const USAGE = `usage: orchard <command>
  serve [orch|chat|registry|all]    run services (default all)
  migrate                           apply database migrations and exit
  rebuild <projection>|--all        empty a projection's tables and replay the log into them
  replay [--stream-prefix P] [--type T]...
                                    print the log as JSON lines (stream, revision, position, type, data, metadata)
  openapi <orch|chat|registry>      print a service's OpenAPI 3.1 document (no server needed)
  keys rotate <username>            rotate an account's API key (interactive terminal only)
  keys runner-status                VERIFIED (0), NOT VERIFIED (3) or CANNOT VERIFY (4) for the runner
  profiles set-reply-mode <slug> <dm_only|channel_mention|both>
                                    set a profile's channel_reply_mode (an operator action in the log)`;

function option(args: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === name && args[i + 1]) values.push(args[++i]!);
  return values;
}

const say = (line: string) => process.stderr.write(line + '\n');

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'openapi') {
    const service = args[0] as ServiceName;
    if (!SERVICES.includes(service)) {
      say(`usage: orchard openapi <${SERVICES.join('|')}>`);
      return 2;
    }
    // Wait for the write: the process exits right after, and a pipe takes 64 KiB at a time.
    const text = JSON.stringify(offlineDocument(service), null, 2) + '\n';
    await new Promise<void>((resolve, reject) => process.stdout.write(text, (error) => (error ? reject(error) : resolve())));
    return 0;
  }
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    throw new StartupError(`configuration: ${(error as Error).message}`);
  }
  // Commands that print data keep stdout for it; their logs go to stderr.
  const log = createLogger({ level: config.logLevel, sink: command === 'serve' ? undefined : (line) => process.stderr.write(line + '\n') });

  switch (command) {
    case 'serve': {
      const which = args[0] ?? 'all';
      const names: ServiceName[] = which === 'all' ? SERVICES : SERVICES.includes(which as ServiceName) ? [which as ServiceName] : [];
      if (names.length === 0) {
        say(`unknown service: ${which}\n${USAGE}`);
        return 2;
      }
      const unlock = await lockDataDir(config.dataDir);
      let platform;
      try {
        platform = await openPlatform(config, log);
      } catch (error) {
        await unlock();
        throw error;
      }
      let running;
      try {
        running = await startServices(platform, names);
      } catch (error) {
        await platform.close();
        await unlock();
        throw error;
      }
      for (const line of announcement(platform, running)) say(line);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      log.info('shutting_down');
      await Promise.all(running.map((s) => s.close()));
      await platform.close();
      await unlock();
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
          say(USAGE);
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
        const filter = { streamPrefixes: option(args, '--stream-prefix'), eventTypes: option(args, '--type') };
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
      say(USAGE);
      return 2;
    }
    case 'profiles': {
      if (args[0] === 'set-reply-mode') return setReplyModeCommand(config, log, args.slice(1), process.stdout, process.stderr);
      say(SET_REPLY_MODE_USAGE);
      return 2;
    }
    default:
      say(USAGE);
      return command ? 2 : 0;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    // One line, no stack: a StartupError says what to change; anything else is reported as is
    // (the stack only at LOG_LEVEL=debug).
    say(`orchard: ${(error as Error).message}`);
    if (!(error instanceof StartupError) && process.env.LOG_LEVEL === 'debug') say(String((error as Error).stack));
    process.exit(1);
  },
);
