// Chat file figures, against a real chat server on loopback (in this process, so its RSS is
// measured):
//
// - file_upload_100mb: MB/s of a 100 MiB multipart upload (streamed through SHA-256 to disk,
//   the event appended and projected), the best of BENCH_UPLOADS runs (default 3), as a ratio to
//   loopback_sink, the same body posted to a plain node:http server that discards it, measured
//   in the same run;
// - file_upload_100mb_rss_growth: MiB the process grew by (peak RSS while uploading minus RSS
//   before), the largest over the runs. Targets: at least 200 MB/s, under 64 MiB.

import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { generateIdentityKeyPair, generateSignedPrekey } from '../crypto/e2ee/index.ts';
import { loadConfig } from '../infra/config.ts';
import { createLogger } from '../infra/logging.ts';
import { openPlatform } from '../main/platform.ts';
import { startServices } from '../main/serve.ts';
import { streamUpload } from '../tests/support/upload-client.ts';
import type { Figure } from './figure.ts';
import { BENCH_POOL_ENV } from './pools.ts';

const MiB = 1024 * 1024;
const SIZE = 100 * MiB;
const round = (value: number, digits = 1) => Number(value.toFixed(digits));
const wire = (b: Uint8Array) => Array.from(b);

export interface FilesBenchOptions {
  uploads?: number;
  progress?: (message: string) => void;
}

async function sinkMBps(): Promise<number> {
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => res.writeHead(201, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const started = performance.now();
    await streamUpload(url, 'none', SIZE);
    return SIZE / 1e6 / ((performance.now() - started) / 1000);
  } finally {
    server.close();
  }
}

export async function chatFilesFigures(databaseUrl: string, options: FilesBenchOptions = {}): Promise<Figure[]> {
  const runs = options.uploads ?? 3;
  const progress = options.progress ?? (() => {});
  const dataDir = await mkdtemp(path.join(tmpdir(), 'orchard-bench-files-'));
  const config = loadConfig({
    ...BENCH_POOL_ENV,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ORCH_SECRET_KEY: 'c5'.repeat(32),
    CHATSVC_LISTEN: '127.0.0.1:0',
    LOG_LEVEL: 'error',
    CHATSVC_AUTH_RATE_PER_MIN: '100000000',
    CHATSVC_API_RATE_PER_SEC: '100000000',
    CHATSVC_UPLOAD_QUOTA_MB: '100000',
  });
  const platform = await openPlatform(config, createLogger({ level: 'error', sink: () => {} }));
  const [chat] = await startServices(platform, ['chat']);
  try {
    const identity = generateIdentityKeyPair();
    const spk = generateSignedPrekey(identity, 1);
    const reg = await fetch(`${chat!.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        username: 'bench_files',
        email: 'bench_files@bench.test',
        password: 'bench-password-files',
        identity_key: wire(identity.publicKey),
        signed_prekey: { key_id: 1, public_key: wire(spk.publicKey), signature: wire(spk.signature) },
        one_time_prekeys: [],
      }),
    });
    const token = ((await reg.json()) as { access_token: string }).access_token;
    progress('loopback_sink: 100 MiB to a discarding server');
    const sink = Math.max(await sinkMBps(), await sinkMBps());
    let best = 0;
    let growth = 0;
    for (let i = 0; i < runs; i++) {
      progress(`file_upload_100mb: run ${i + 1} of ${runs}`);
      const before = process.memoryUsage().rss;
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 5);
      const started = performance.now();
      const result = await streamUpload(`${chat!.url}/api/files/upload`, token, SIZE).finally(() =>
        clearInterval(sampler),
      );
      const seconds = (performance.now() - started) / 1000;
      if (result.status !== 201) throw new Error(`upload: ${result.status} ${result.text}`);
      best = Math.max(best, SIZE / 1e6 / seconds);
      growth = Math.max(growth, (peak - before) / MiB);
    }
    return [
      { name: 'loopback_sink', value: round(sink), unit: 'MB/s' },
      {
        name: 'file_upload_100mb',
        value: round(best),
        unit: 'MB/s',
        baseline: 'loopback_sink',
        ratio: round(best / sink, 2),
      },
      { name: 'file_upload_100mb_rss_growth', value: round(growth), unit: 'MiB' },
    ];
  } finally {
    await chat!.close();
    await platform.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
