// `orchard dev esdb [--port N]`: the in-process EventStoreDB TEST DOUBLE of the suites
// (tests/doubles/esdb-test-server.ts) on a loopback port, so a newcomer without an EventStoreDB
// server can run `EVENTSTORE_URL=esdb://127.0.0.1:2113?tls=false npm start`. It is not a server:
// it keeps the log in memory (gone when it stops), serves only the calls our adapter makes, and
// has no security, clustering or persistence. Production runs EventStoreDB (docs/eventstoredb.md).
//
// The double lives under tests/ and needs devDependencies (@grpc/grpc-js): it is imported only
// here, by a computed path that a release bundle leaves alone, and its absence is said plainly.

import net from 'node:net';

/** Where the real server listens: a connection string written for one works against the other. */
const DEFAULT_PORT = 2113;
const DOUBLE = new URL('../tests/doubles/esdb-test-server.ts', import.meta.url).href;

export const DEV_ESDB_USAGE =
  'usage: orchard dev esdb [--port N]   (an in-memory EventStoreDB TEST DOUBLE for local runs; not a server)';

type Writable = { write(chunk: string): unknown };

function parsePort(args: string[]): number | null {
  if (args.length === 0) return DEFAULT_PORT;
  if (args.length !== 2 || args[0] !== '--port' || !/^\d+$/.test(args[1]!)) return null;
  const port = Number(args[1]);
  return port <= 65535 ? port : null; // 0: any free port (announced)
}

export async function devCommand(
  args: string[],
  out: Writable,
  err: Writable,
  stopped: Promise<void>,
): Promise<number> {
  if (args[0] !== 'esdb') {
    err.write(`${DEV_ESDB_USAGE}\n`);
    return 2;
  }
  const port = parsePort(args.slice(1));
  if (port === null) {
    err.write(`${DEV_ESDB_USAGE}\n`);
    return 2;
  }
  let startEsdbTestServer: (options?: object) => Promise<{ url: string; stop(): Promise<void> }>;
  try {
    ({ startEsdbTestServer } = await import(DOUBLE));
  } catch (error) {
    err.write(
      `orchard dev esdb: the EventStoreDB test double cannot be loaded (${(error as Error).message.split('\n')[0]}).\n` +
        'It ships with the sources, not with a release: run it from a git checkout with its devDependencies installed (npm install, not --omit=dev).\n',
    );
    return 1;
  }
  const double = await startEsdbTestServer();
  // The double listens on an ephemeral loopback port, as the suites want; the chosen port is
  // forwarded to it byte for byte (gRPC over HTTP/2 passes through unchanged).
  const target = Number(new URL(double.url).port);
  const sockets = new Set<net.Socket>();
  const forward = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  try {
    await new Promise<void>((resolve, reject) => {
      forward.once('error', reject);
      forward.listen(port, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    await double.stop();
    err.write(
      `orchard dev esdb: cannot listen on 127.0.0.1:${port}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}\n`,
    );
    return 1;
  }
  const bound = (forward.address() as net.AddressInfo).port;
  out.write(
    [
      'orchard dev esdb: an EventStoreDB TEST DOUBLE, not a server. The log lives in memory and is lost when',
      'this stops; it serves only what the adapter uses, with no security or persistence. For local runs only.',
      `orchard dev esdb: listening  esdb://127.0.0.1:${bound}?tls=false`,
      `  EVENTSTORE_URL='esdb://127.0.0.1:${bound}?tls=false' npm start`,
      '',
    ].join('\n'),
  );
  await stopped;
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => forward.close(() => resolve()));
  await double.stop();
  return 0;
}
