// Chat service figures, against a real chat server on loopback (one process, the database
// given): login latency (scrypt), refresh rotations per second, bundle fetches per second with 8
// clients (each consumes a one-time prekey through the keys aggregate), and WebSocket
// connections held open at once with the server's memory per connection (clients in a child
// process, so only the server's memory is counted).
//
// Each figure is reported with its baseline where one makes sense: the password KDF alone for
// logins, and an authenticated read (GET /api/keys/prekeys/count) for bundle fetches, measured
// paired (alternating slices) under the same load.

import { spawn } from 'node:child_process';
import v8 from 'node:v8';
import vm from 'node:vm';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateIdentityKeyPair, generateOneTimePrekeys, generateSignedPrekey } from '../crypto/e2ee/index.ts';
import { hashPassword, verifyPassword } from '../crypto/password.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { paired, throughput, type Operation } from './measure.ts';
import { percentile } from './http.ts';
import type { Figure } from './figure.ts';
import { BENCH_POOL_ENV } from './pools.ts';
export type { Figure } from './figure.ts';

const WS_CLIENT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'chat-ws-clients.ts');
const round = (value: number, digits = 0) => Number(value.toFixed(digits));
const wire = (b: Uint8Array) => Array.from(b);

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
}

async function register(base: string, name: string, oneTime: number) {
  const identity = generateIdentityKeyPair();
  const spk = generateSignedPrekey(identity, 1);
  const password = `bench-password-${name}`;
  const first = generateOneTimePrekeys(1, Math.min(oneTime, 200));
  const r = await post(`${base}/api/auth/register`, {
    username: name,
    email: `${name}@bench.test`,
    password,
    identity_key: wire(identity.publicKey),
    signed_prekey: { key_id: 1, public_key: wire(spk.publicKey), signature: wire(spk.signature) },
    one_time_prekeys: first.map((k) => ({ key_id: k.keyId, public_key: wire(k.publicKey) })),
  });
  if (r.status !== 201) throw new Error(`register ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  const auth = { authorization: `Bearer ${r.body.access_token}` };
  for (let next = 201; next <= oneTime; next += 200) {
    const batch = generateOneTimePrekeys(next, Math.min(200, oneTime - next + 1)).map((k) => ({
      key_id: k.keyId,
      public_key: wire(k.publicKey),
    }));
    const up = await post(`${base}/api/keys/prekeys/one-time`, { prekeys: batch }, auth);
    if (up.status !== 200) throw new Error(`upload: ${up.status} ${JSON.stringify(up.body)}`);
  }
  return {
    id: r.body.user.id as string,
    password,
    access: r.body.access_token as string,
    refresh: r.body.refresh_token as string,
    auth,
  };
}

async function get(url: string, headers: Record<string, string>): Promise<void> {
  const r = await fetch(url, { headers });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
}

/** A full collection, without needing node's --expose-gc flag on the command line. */
function collect(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

/** Server memory (heap and external) after a full collection. */
function memory(): { heap: number } {
  collect();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external + m.arrayBuffers };
}

export interface ChatBenchOptions {
  seconds?: number;
  logins?: number;
  wsConnections?: number;
  progress?: (message: string) => void;
}

export async function chatFigures(databaseUrl: string, options: ChatBenchOptions = {}): Promise<Figure[]> {
  const seconds = options.seconds ?? 4;
  const timing = { warmupMs: seconds * 250, measureMs: seconds * 1000 };
  const progress = options.progress ?? (() => {});
  const figures: Figure[] = [];
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-chat-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c3'.repeat(32),
    CHATSVC_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    // The figures measure the service, not its limits.
    CHATSVC_AUTH_RATE_PER_MIN: '100000000',
    CHATSVC_API_RATE_PER_SEC: '100000000',
  });
  const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
  const [chat] = await startServices(platform, ['chat']);
  const base = chat!.url;
  try {
    // --- chat_login: sequential password logins, p99 against the KDF alone ---------------
    const logins = options.logins ?? 30;
    progress(`chat_login: ${logins} sequential logins`);
    const owner = await register(base, 'bench_owner', 10);
    const loginMs: number[] = [];
    const kdfMs: number[] = [];
    const hash = await hashPassword(owner.password);
    for (let i = 0; i < logins; i++) {
      let started = performance.now();
      const r = await post(`${base}/api/auth/login`, { username: 'bench_owner', password: owner.password });
      if (r.status !== 200) throw new Error(`login: ${r.status}`);
      loginMs.push(performance.now() - started);
      started = performance.now();
      await verifyPassword(owner.password, hash);
      kdfMs.push(performance.now() - started);
    }
    const kdfP99 = percentile(kdfMs, 99);
    figures.push({ name: 'password_kdf_p99', value: round(kdfP99, 1), unit: 'ms' });
    figures.push({ name: 'chat_login_p50', value: round(percentile(loginMs, 50), 1), unit: 'ms' });
    figures.push({
      name: 'chat_login_p99',
      value: round(percentile(loginMs, 99), 1),
      unit: 'ms',
      baseline: 'password_kdf_p99',
      ratio: round(percentile(loginMs, 99) / kdfP99, 3),
    });

    // --- chat_refresh: 8 sessions, each rotating its refresh token in a loop -----------------
    progress(`chat_refresh: 8 sessions (${seconds}s)`);
    const sessions: string[] = [];
    for (let i = 0; i < 8; i++)
      sessions.push(
        (await post(`${base}/api/auth/login`, { username: 'bench_owner', password: owner.password })).body
          .refresh_token,
      );
    const refreshes: Operation[] = sessions.map((_, i) => async () => {
      const r = await post(`${base}/api/auth/refresh`, { refresh_token: sessions[i] });
      if (r.status !== 200) throw new Error(`refresh: ${r.status} ${JSON.stringify(r.body)}`);
      sessions[i] = r.body.refresh_token;
      return 1;
    });
    const refresh = await throughput(refreshes, timing);
    figures.push({ name: 'chat_refresh', value: round(refresh.perSecond), unit: 'refreshes/s' });

    // --- bundle_fetch: 8 clients fetching bundles of 16 users, paired with an authenticated read
    progress('bundle_fetch: registering 16 users with 1000 one-time prekeys each');
    const targets: Awaited<ReturnType<typeof register>>[] = [];
    for (let i = 0; i < 16; i++) targets.push(await register(base, `bench_target_${i}`, 1000));
    const clients: Awaited<ReturnType<typeof register>>[] = [];
    for (let i = 0; i < 8; i++) clients.push(await register(base, `bench_client_${i}`, 0));
    let exhausted = 0;
    const fetches: Operation[] = clients.map((client, w) => {
      let n = w;
      return async () => {
        const target = targets[(n += 8) % targets.length]!;
        const r = await fetch(`${base}/api/keys/${target.id}/bundle`, { headers: client.auth });
        const body = (await r.json()) as { one_time_prekey: unknown };
        if (r.status !== 200) throw new Error(`bundle: ${r.status}`);
        if (!body.one_time_prekey) exhausted += 1;
        return 1;
      };
    });
    const reads: Operation[] = clients.map((client) => async () => {
      await get(`${base}/api/keys/prekeys/count`, client.auth);
      return 1;
    });
    progress(`bundle_fetch paired with authenticated_read, 8 clients (${seconds}s each)`);
    const [read, bundles] = await paired(reads, fetches, { ...timing, slices: 8 });
    if (exhausted > 0) progress(`bundle_fetch: ${exhausted} fetches found no one-time prekey left`);
    figures.push({ name: 'authenticated_read_8clients', value: round(read.perSecond), unit: 'requests/s' });
    figures.push({
      name: 'bundle_fetch_8clients',
      value: round(bundles.perSecond),
      unit: 'fetches/s',
      baseline: 'authenticated_read_8clients',
      ratio: round(bundles.perSecond / read.perSecond, 3),
    });

    // --- ws_connections: held open at once, server memory per connection ---------------------
    const wanted = options.wsConnections ?? 2000;
    progress(`ws_connections: opening ${wanted} authenticated sockets from a child process`);
    const users: string[] = [];
    for (let i = 0; i < 20; i++)
      users.push(
        (await post(`${base}/api/auth/login`, { username: 'bench_owner', password: owner.password })).body
          .access_token as string,
      );
    const before = memory();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', WS_CLIENT, JSON.stringify({ url: base, tokens: users, connections: wanted })],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    );
    const held = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c) => {
        out += c;
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve((JSON.parse(line) as { authenticated: number }).authenticated);
      });
      child.once('exit', (code) => reject(new Error(`ws clients exited early (${code}): ${out}`)));
    });
    await new Promise((r) => setTimeout(r, 500));
    const after = memory();
    child.stdin.end();
    await new Promise((r) => child.once('exit', r));
    figures.push({ name: 'ws_connections', value: held, unit: 'connections' });
    // Heap and external memory after a full collection: RSS moves with what the allocator
    // returns to the system and is too noisy to divide by the connections.
    figures.push({
      name: 'ws_memory_per_connection',
      value: round((after.heap - before.heap) / held / 1024, 1),
      unit: 'KiB (heap+external)',
    });
  } finally {
    await chat!.close();
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
  return figures;
}
