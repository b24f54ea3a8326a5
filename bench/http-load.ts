// A closed-loop HTTP load generator, run as its own process so that it does not share the
// server's event loop: `node --import tsx bench/http-load.ts '<json options>'`.
// Prints one JSON object: requests completed in the measured window, non-2xx answers, seconds.

import http from 'node:http';
import { performance } from 'node:perf_hooks';

interface Options {
  url: string;
  headers: Record<string, string>;
  /** Optional: connection i sends headerSets[i % length] instead of `headers` (one credential per client). */
  headerSets?: Record<string, string>[];
  connections: number;
  warmupMs: number;
  measureMs: number;
}

const options = JSON.parse(process.argv[2] ?? '{}') as Options;
const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });

function once(headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(options.url, { agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

const start = performance.now();
const windowStart = start + options.warmupMs;
const windowEnd = windowStart + options.measureMs;
let requests = 0;
let failures = 0;
await Promise.all(
  Array.from({ length: options.connections }, async (_, i) => {
    const headers = options.headerSets?.length ? options.headerSets[i % options.headerSets.length]! : options.headers;
    while (performance.now() < windowEnd) {
      const status = await once(headers);
      const now = performance.now();
      if (now >= windowStart && now < windowEnd) {
        requests += 1;
        if (status < 200 || status >= 300) failures += 1;
      }
    }
  }),
);
agent.destroy();
process.stdout.write(JSON.stringify({ requests, failures, seconds: options.measureMs / 1000 }) + '\n');
