// What needs a real socket: a 30 MB upload to POST /auth/login is answered 413 as soon as the
// route's limit is passed, while the client is still sending, and the client reads that answer
// (no bare reset); the same for a chunked upload with no declared length; oversized headers and
// a NUL byte in a header are refused by the HTTP parser.

import http from 'node:http';
import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServices, type TestServices } from '../support/services.ts';

const TOTAL = 30 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);

interface Outcome {
  status: number;
  body: string;
  writtenAtResponse: number;
}

/** POST `TOTAL` bytes to `url`, writing as fast as the socket takes them, until the response arrives. */
function upload(url: string, chunked: boolean): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (!chunked) headers['content-length'] = String(TOTAL);
    const req = http.request(url, { method: 'POST', headers }, (res) => {
      answered = true;
      const at = written;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body, writtenAtResponse: at }));
      res.on('error', reject);
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    req.write('{"email":"a@example.test","password":"');
    const pump = () => {
      while (!answered && written < TOTAL) {
        written += CHUNK.length;
        if (!req.write(CHUNK)) return void req.once('drain', pump);
      }
      if (!answered) req.end('"}');
    };
    pump();
  });
}

/** Raw bytes to a server, and the first line of its answer. */
function raw(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(request));
    let answer = '';
    socket.on('data', (c) => (answer += c));
    socket.on('end', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    socket.on('error', (error) => (answer ? resolve(answer.split('\r\n')[0]!) : reject(error)));
  });
}

const test = suite<{ s: TestServices }>('e2e request hygiene on a real socket');
test.before(async (ctx) => {
  ctx.s = await startTestServices('hygiene_socket');
});
test.after(async ({ s }) => s?.close());

for (const chunked of [false, true]) {
  test(`a 30 MB ${chunked ? 'chunked' : 'declared'} body to POST /auth/login: 413 while the upload is still going`, async ({
    s,
  }) => {
    const outcome = await upload(`${s.orch}/auth/login`, chunked);
    assert.is(outcome.status, 413);
    assert.equal(JSON.parse(outcome.body), {
      error: 'payload_too_large',
      message: "request body exceeds this route's limit of 16384 bytes",
      limit_bytes: 16384,
    });
    assert.ok(outcome.writtenAtResponse < TOTAL / 4, `answered after ${outcome.writtenAtResponse} bytes`);
    if (process.env.HYGIENE_VERBOSE) console.log(`  answered after ${outcome.writtenAtResponse} of ${TOTAL} bytes`);
    // The server stays healthy for the next client.
    assert.is((await fetch(`${s.orch}/api/v1/health`)).status, 200);
  });
}

test('oversized headers get 431, a NUL byte in a header 400, from the HTTP parser', async ({ s }) => {
  const big = await raw(s.orch, `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  assert.match(big, /^HTTP\/1\.1 431/);
  const nul = await raw(s.orch, 'GET /api/v1/me HTTP/1.1\r\nHost: x\r\nX-API-Key: orch_a\u0000b\r\n\r\n');
  assert.match(nul, /^HTTP\/1\.1 400/);
  assert.is((await fetch(`${s.orch}/api/v1/health`)).status, 200);
});

test.run();
