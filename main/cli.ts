// `orchard <command>`: serve, migrate, rebuild, replay, openapi, config, keys, profiles, audit, release, updates, dev.

import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { StartupError } from '../infra/startup-error.ts';
import type { ServiceName } from './apps.ts';

// Each command loads only its own modules. Loading them all costs a cold start about two
// seconds of CPU, and the updater runs `orchard migrate` while the services are down: that
// start is downtime (bench/updates.ts, update_unavailable_ms).

const usage = async () => `usage: orchard <command>
  serve [orch|chat|registry|all] [--standby]
                                    run services (default all); --standby: started by the
                                    updater sidecar, waits for its go (main/standby.ts)
  serve runner                      run the agent runner (a separate process, talks HTTP to orch)
  serve sidecar [--enable-failpoints]
                                    run the updater sidecar (applies signed releases)
  migrate                           apply database migrations and exit
  rebuild <projection>|--all        empty a projection's tables and replay the log into them
  replay [--stream-prefix P | --category C]... [--type T]... [--until <RFC 3339 | position>]
                                    print the log as JSON lines (stream, revision, position, type, data, metadata)
  openapi <orch|chat|registry>      print a service's OpenAPI 3.1 document (no server needed)
  config                            print every configuration variable: its effective value and where it
                                    came from (env, file, default), secrets redacted; exit 1 if invalid
  keys rotate <username>            rotate an account's API key (interactive terminal only)
  keys runner-status                VERIFIED (0), NOT VERIFIED (3) or CANNOT VERIFY (4) for the runner
  profiles set-reply-mode <slug> <dm_only|channel_mention|both>
                                    set a profile's channel_reply_mode (an operator action in the log)
  release keygen <prefix> | release sign <key file> <payload file> | release bundle <build dir>
                                    make a release signing key; sign a manifest (DSSE envelope);
                                    precompile a release's sources into <dir>/dist/
  updates unfreeze <apply_id>       lift a frozen apply's maintenance once repaired by hand
  dev esdb [--port N]               an in-memory EventStoreDB TEST DOUBLE on 127.0.0.1 (default 2113) for
                                    local runs with EVENTSTORE_URL; not a server (a git checkout only)
${(await import('./audit-cli.ts')).AUDIT_USAGE.replace(/^usage: orchard audit <command>\n/, '')}`;

const say = (line: string) => process.stderr.write(line + '\n');

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (command === 'release')
    return (await import('./updates-cli.ts')).releaseCommand(args, process.stdout, process.stderr);
  if (command === 'dev') {
    const stopped = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    return (await import('./dev-esdb.ts')).devCommand(args, process.stdout, process.stderr, stopped);
  }
  if (command === 'openapi') {
    const [{ SERVICES }, { offlineDocument }] = await Promise.all([import('./apps.ts'), import('./openapi.ts')]);
    const service = args[0] as ServiceName;
    if (!SERVICES.includes(service)) {
      say(`usage: orchard openapi <${SERVICES.join('|')}>`);
      return 2;
    }
    // Wait for the write: the process exits right after, and a pipe takes 64 KiB at a time.
    const text = JSON.stringify(offlineDocument(service), null, 2) + '\n';
    await new Promise<void>((resolve, reject) =>
      process.stdout.write(text, (error) => (error ? reject(error) : resolve())),
    );
    return 0;
  }
  // Before loadConfig: it shows the configuration even when a start would refuse it.
  if (command === 'config')
    return (await import('./config-cli.ts')).configCommand(process.env, process.stdout, process.stderr);
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    throw new StartupError(`configuration: ${(error as Error).message}`);
  }
  // Commands that print data keep stdout for it; their logs go to stderr.
  const log = createLogger({
    level: config.logLevel,
    sink: command === 'serve' ? undefined : (line) => process.stderr.write(line + '\n'),
  });

  switch (command) {
    case 'serve': {
      if (args[0] === 'sidecar')
        return (await import('./sidecar.ts')).serveSidecar(config, log, {
          enableFailpoints: args.includes('--enable-failpoints'),
        });
      const which = args.find((a) => !a.startsWith('--')) ?? 'all';
      if (which === 'runner') return (await import('./runner/index.ts')).serveRunner(config, log);
      // --standby: started by the updater sidecar ahead of a swap (main/standby.ts).
      const standby = args.includes('--standby') ? (await import('./standby.ts')).openStandbyLink() : null;
      const [
        { SERVICES },
        { buildPlatform, openPlatform },
        { announcement, buildServices, ensureConfigured, listenServices, lockDataDir },
      ] = await Promise.all([import('./apps.ts'), import('./platform.ts'), import('./serve.ts')]);
      const names: ServiceName[] =
        which === 'all' ? SERVICES : SERVICES.includes(which as ServiceName) ? [which as ServiceName] : [];
      if (names.length === 0) {
        say(`unknown service: ${which}\n${await usage()}`);
        return 2;
      }
      // The web console: rebuilt first when its build is missing or stale and Vite is installed.
      if (names.includes('orch')) await (await import('./console.ts')).ensureConsoleBuilt(log);
      // A standby builds everything that needs neither the database nor the DATA_DIR lock while
      // the old release still serves: the platform's parts and the apps. Told to migrate (the old
      // release is gone), it opens the platform; told to serve, it listens.
      if (standby && !config.databaseUrl)
        throw new StartupError(
          'serve --standby needs DATABASE_URL (an embedded server cannot be shared with the release it replaces)',
        );
      let built;
      let platform;
      let prepared;
      let running;
      let unlock: (() => Promise<void>) | undefined;
      try {
        if (standby) {
          built = await buildPlatform(config, log);
          prepared = buildServices(built.platform, names);
          await standby.ready();
        }
        unlock = await lockDataDir(config.dataDir);
        if (built) {
          await built.open((applied) => standby!.migrated(applied));
          platform = built.platform;
        } else {
          platform = await openPlatform(config, log);
        }
        await ensureConfigured(platform, names);
        prepared ??= buildServices(platform, names);
        await standby?.serveWhenTold();
        running = await listenServices(platform, prepared);
      } catch (error) {
        await (platform ?? built?.platform)?.close();
        await unlock?.();
        await standby?.failed(error);
        throw error;
      }
      for (const line of announcement(platform, running)) say(line);
      await standby?.listening();
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      log.info('shutting_down');
      await Promise.all(running.map((s) => s.close()));
      await platform.close();
      await unlock!();
      return 0;
    }
    case 'migrate': {
      const { openPlatform } = await import('./platform.ts');
      const platform = await openPlatform(config, log, { runProjections: false });
      await platform.close();
      return 0;
    }
    case 'rebuild': {
      const { openPlatform } = await import('./platform.ts');
      const platform = await openPlatform(config, log, { runProjections: false });
      try {
        const names = args[0] === '--all' ? platform.engine.projections.map((p) => p.name) : args.slice(0, 1);
        if (names.length === 0) {
          say(await usage());
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
    case 'replay':
      return (await import('./audit-cli.ts')).replayCommand(config, log, args, process.stdout, process.stderr);
    case 'audit':
      return (await import('./audit-cli.ts')).auditCommand(config, log, args, process.stdout, process.stderr);
    case 'keys': {
      const { keysRotate, runnerStatus } = await import('./keys.ts');
      if (args[0] === 'rotate') return keysRotate(config, log, args[1], process.stdout, process.stderr);
      if (args[0] === 'runner-status') return runnerStatus(config, log, process.stdout);
      say(await usage());
      return 2;
    }
    case 'updates':
      return (await import('./updates-cli.ts')).updatesCommand(config, args, process.stdout, process.stderr);
    case 'profiles': {
      const { SET_REPLY_MODE_USAGE, setReplyModeCommand } = await import('./profiles.ts');
      if (args[0] === 'set-reply-mode')
        return setReplyModeCommand(config, log, args.slice(1), process.stdout, process.stderr);
      say(SET_REPLY_MODE_USAGE);
      return 2;
    }
    default:
      say(await usage());
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
