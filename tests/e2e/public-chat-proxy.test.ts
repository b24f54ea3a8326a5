// Public chat's client key over real sockets (rules 6-7): X-Forwarded-For spread over several
// header lines, and hops larger than the real proxy count handing the key to the caller, from two
// client addresses bound on 127.0.0.x.

import { connect } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { makeProfile } from '../orchestration/agent-chat/helpers.ts';
import { startTestServices, type TestServices } from '../support/services.ts';

const ADMIN_KEY = 'orch_public-chat-proxy-admin-key-000000';

/** One raw HTTP/1.1 request from `localAddress`, with header lines exactly as given; resolves to the status. */
function rawPost(url: string, localAddress: string, headerLines: string[], body: string): Promise<number> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress }, () => {
      socket.write(
        [
          `POST ${pathname} HTTP/1.1`,
          `Host: ${hostname}:${port}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
          'Connection: close',
          ...headerLines,
          '',
          body,
        ].join('\r\n'),
      );
    });
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

const test = suite<{ s: TestServices; url: string }>('e2e public chat behind proxies');

test.before(async (ctx) => {
  ctx.s = await startTestServices('public_chat_proxy', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_PUBLIC_CHAT_RPM: '1',
    ORCH_TRUSTED_PROXY_HEADER: 'x-forwarded-for',
    ORCH_TRUSTED_PROXY_HOPS: '2',
  });
  await makeProfile(ctx.s, ADMIN_KEY, { slug: 'front', security_tier: 1 });
  ctx.url = `${ctx.s.orch}/api/v1/public/agents/chat/front`;
});
test.after(async ({ s }) => s?.close());

const body = JSON.stringify({ message: 'hello' });

test('X-Forwarded-For across several header lines: the last two entries of all lines together', async ({ url }) => {
  // Lines "203.0.113.5" and "10.0.0.1" are the list 203.0.113.5, 10.0.0.1: the client is 203.0.113.5.
  assert.is(
    await rawPost(
      url,
      '127.0.0.2',
      ['X-Forwarded-For: 192.0.2.99', 'X-Forwarded-For: 203.0.113.5', 'X-Forwarded-For: 10.0.0.1'],
      body,
    ),
    200,
  );
  assert.is(
    await rawPost(url, '127.0.0.3', ['X-Forwarded-For: 203.0.113.5, 10.0.0.7'], body),
    429,
    'the same client through another proxy',
  );
  assert.is(
    await rawPost(url, '127.0.0.2', ['X-Forwarded-For: 203.0.113.6', 'X-Forwarded-For: 10.0.0.1'], body),
    200,
    'another client',
  );
});

test('hops larger than the real proxy count hand the key to the caller', async ({ url }) => {
  // No proxy in front: every entry is the caller's own. Two real clients, 127.0.0.2 and 127.0.0.3.
  assert.is(await rawPost(url, '127.0.0.2', ['X-Forwarded-For: 198.51.100.1'], body), 200);
  assert.is(
    await rawPost(url, '127.0.0.2', ['X-Forwarded-For: 198.51.100.2'], body),
    200,
    'the same caller picks a fresh bucket',
  );
  assert.is(
    await rawPost(url, '127.0.0.3', ['X-Forwarded-For: 198.51.100.1'], body),
    429,
    "another caller can spend someone else's bucket",
  );
  // Without the header the peer counts, one bucket per real client.
  assert.is(await rawPost(url, '127.0.0.2', [], body), 200);
  assert.is(await rawPost(url, '127.0.0.3', [], body), 200);
  assert.is(await rawPost(url, '127.0.0.3', [], body), 429);
});

test.run();
