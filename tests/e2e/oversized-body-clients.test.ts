// A body over a route's limit is answered 413 to every client, on a real socket: Node's own
// `fetch` (undici), curl, and a raw socket, at several sizes and repeatedly (the old failure, a
// socket closed under undici before it read the answer, came in about half of the tries at
// 2.5 MB). The server stops reading into memory at the limit but keeps draining the rest for a
// bounded size and time before it closes (a lingering close); a client that never stops sending
// is closed once that bound is passed.

import { spawn } from 'node:child_process';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LINGER_MAX_BYTES } from '../../main/lingering-close.ts';
import { startTestServices, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_oversized-admin-key-000000000000000';
const MB = 1_000_000;
const SIZES = [1.5 * MB, 2.5 * MB, 8 * MB, 30 * MB];
/** Tries per size: the old failure came in about one try of two at 1.5 and 2.5 MB, rarely above. */
const TRIES = Number(process.env.OVERSIZED_TRIES ?? 8);
const triesAt = (size: number) => (size <= 2.5 * MB ? TRIES : Math.ceil(TRIES / 4));
const ROUTE = '/api/v1/templates/no-such-template/instantiate';
const TOO_LARGE = {
  error: 'payload_too_large',
  message: "request body exceeds this route's limit of 1048576 bytes",
  limit_bytes: 1048576,
};

const bodyOf = (size: number) =>
  Buffer.concat([Buffer.from('{"pad":"'), Buffer.alloc(size - 10, 0x61), Buffer.from('"}')]);

/** curl's status line and body, as `<status>\n<body>`. */
function curl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '-o', '-', '-w', '\n%{http_code}', ...args]);
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`curl exited ${code}: ${err.trim()}`))));
  });
}

interface RawOutcome {
  answer: string;
  written: number;
  closedByServer: boolean;
}

/**
 * Headers, then `size` bytes of body (Infinity: never stops) written as fast as the socket takes
 * them, reading the answer meanwhile; resolves once the whole body is written and the whole answer
 * read (the server may keep the connection for another request), or when the server closes it.
 */
function rawUpload(url: string, size: number, paceMs = 0): Promise<RawOutcome> {
  const { hostname, port } = new URL(url);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  return new Promise((resolve) => {
    let answer = '';
    let written = 0;
    let closedByServer = false;
    const socket: Socket = connect(Number(port), hostname, () => {
      const length = Number.isFinite(size) ? size : 1e12;
      socket.write(
        `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${ADMIN_KEY}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`,
      );
      pump();
    });
    const pump = () => {
      while (!socket.destroyed && written < size) {
        // Paced: a KiB at a time, `paceMs` apart.
        const piece = chunk.subarray(0, Math.min(paceMs ? 1024 : chunk.length, size - written));
        written += piece.length;
        if (paceMs) return void socket.write(piece, () => setTimeout(pump, paceMs));
        if (!socket.write(piece)) return void socket.once('drain', pump);
      }
      finishIfDone();
    };
    const finishIfDone = () => {
      const { head, body } = responseOf(answer);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head)?.[1];
      if (written >= size && length !== undefined && Buffer.byteLength(body) >= Number(length)) socket.end();
    };
    socket.on('data', (c) => {
      answer += c;
      finishIfDone();
    });
    socket.on('end', () => (closedByServer = true));
    socket.on('error', () => (closedByServer = true)); // EPIPE or a reset once the server has closed
    socket.on('close', () => resolve({ answer, written, closedByServer }));
  });
}

const responseOf = (answer: string) => {
  const [head = '', body = ''] = answer.split('\r\n\r\n');
  return { statusLine: head.split('\r\n')[0] ?? '', head, body };
};

const test = suite<{ s: TestServices; dir: string }>('e2e oversized bodies answered to every client');
test.before(async (ctx) => {
  ctx.s = await startTestServices('oversized_clients', { ADMIN_API_KEY: ADMIN_KEY });
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-oversized-'));
});
test.after(async ({ s, dir }) => {
  await s?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('fetch (undici): 413 with its body at every size, every try, declared length', async ({ s }) => {
  for (const size of SIZES) {
    const body = bodyOf(size);
    for (let i = 0; i < triesAt(size); i++) {
      let r: Response;
      try {
        r = await fetch(`${s.orch}${ROUTE}`, {
          method: 'POST',
          headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
          body,
        });
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        throw new Error(
          `${size / MB} MB, try ${i + 1}: ${(error as Error).message} (${cause?.code ?? ''} ${cause?.message ?? ''})`,
        );
      }
      assert.is(r.status, 413, `${size / MB} MB, try ${i + 1}`);
      assert.equal(await r.json(), TOO_LARGE);
    }
  }
});

test('fetch (undici): 413 to a streamed body with no declared length', async ({ s }) => {
  for (const size of [1.5 * MB, 2.5 * MB, 8 * MB]) {
    for (let i = 0; i < triesAt(size); i++) {
      const piece = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= size) return controller.close();
          sent += piece.length;
          controller.enqueue(piece);
        },
      });
      const r = await fetch(`${s.orch}${ROUTE}`, {
        method: 'POST',
        headers: { 'x-api-key': ADMIN_KEY, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      assert.is(r.status, 413, `${size / MB} MB streamed, try ${i + 1}`);
      assert.equal(await r.json(), TOO_LARGE);
    }
  }
});

test('curl: 413 with its body at every size, with and without Expect: 100-continue', async ({ s, dir }) => {
  for (const size of SIZES) {
    const file = path.join(dir, `body-${size}`);
    await writeFile(file, bodyOf(size));
    for (const expect of [[], ['-H', 'Expect:']]) {
      for (let i = 0; i < Math.ceil(triesAt(size) / 8); i++) {
        const out = await curl([
          ...expect,
          '-H',
          `X-API-Key: ${ADMIN_KEY}`,
          '-H',
          'Content-Type: application/json',
          '--data-binary',
          `@${file}`,
          `${s.orch}${ROUTE}`,
        ]);
        const status = out.slice(out.lastIndexOf('\n') + 1);
        assert.is(status, '413', `${size / MB} MB ${expect.length ? 'without' : 'with'} Expect, try ${i + 1}`);
        assert.equal(JSON.parse(out.slice(0, out.lastIndexOf('\n'))), TOO_LARGE);
      }
    }
  }
});

test('a raw socket reads the 413 whatever the size', async ({ s }) => {
  for (const size of SIZES) {
    for (let i = 0; i < Math.ceil(triesAt(size) / 2); i++) {
      const { answer } = await rawUpload(s.orch, size);
      const { statusLine, body } = responseOf(answer);
      assert.is(
        statusLine,
        'HTTP/1.1 413 Payload Too Large',
        `${size / MB} MB, try ${i + 1}: ${JSON.stringify(answer.slice(0, 80))}`,
      );
      assert.equal(JSON.parse(body), TOO_LARGE);
    }
  }
});

test('a client that never stops sending is answered, then closed once the drain bound is passed', async ({ s }) => {
  const { answer, written, closedByServer } = await rawUpload(s.orch, Infinity);
  assert.is(responseOf(answer).statusLine, 'HTTP/1.1 413 Payload Too Large');
  assert.ok(closedByServer);
  // What the client got written before the close: the drain bound plus what the two kernels' socket buffers hold.
  assert.ok(written < LINGER_MAX_BYTES + 16 * MB, `closed after ${written} bytes`);
  assert.is((await fetch(`${s.orch}/api/v1/health`)).status, 200);
});

test('a client that sends slowly forever is answered, then closed once the drain time is up', async ({ s }) => {
  const { answer, closedByServer } = await rawUpload(s.orch, Infinity, 50);
  assert.is(responseOf(answer).statusLine, 'HTTP/1.1 413 Payload Too Large');
  assert.ok(closedByServer);
});

test.run();
