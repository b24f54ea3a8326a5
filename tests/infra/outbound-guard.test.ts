// The SSRF guard's address rules (ipaddr.js) and its switches, without a database: every
// non-public range is refused, in every IPv6 form that embeds an IPv4 address; the loopback
// switch admits only 127.0.0.0/8 and ::1 and only with NODE_ENV=test; without it a loopback
// server is refused even on an allowed port check.

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../infra/config.ts';
import { addressAllowed, guardedFetch, OutboundError } from '../../infra/outbound/guard.ts';

const test = suite('outbound SSRF guard');

test('addresses: only public unicast; embedded IPv4 forms judged by what they embed', () => {
  const refused = [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '240.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '2001:db8::1',
    '100::1',
    '::ffff:10.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    '64:ff9b::7f00:1',
    '64:ff9b:1::5db8:d822',
    '2002:a00:1::1',
    '2002:7f00:1::1',
    '::7f00:1',
    '::a00:1',
    '2001::1',
    'not an address',
  ];
  for (const a of refused) assert.is(addressAllowed(a, false), false, a);
  for (const a of [
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:93.184.216.34',
    '64:ff9b::5db8:d822',
    '2002:5db8:d822::1',
  ])
    assert.is(addressAllowed(a, false), true, a);
  // The test switch: loopback as written, never wrapped.
  for (const a of ['127.0.0.1', '127.1.2.3', '::1']) assert.is(addressAllowed(a, true), true, a);
  for (const a of ['::ffff:127.0.0.1', '64:ff9b::7f00:1', '10.0.0.1']) assert.is(addressAllowed(a, true), false, a);
});

test('the loopback switch needs NODE_ENV=test', () => {
  assert.throws(() => loadConfig({ CHATSVC_OUTBOUND_ALLOW_LOOPBACK: '1' }), /NODE_ENV=test/);
  assert.throws(() => loadConfig({ CHATSVC_OUTBOUND_ALLOW_LOOPBACK: '1', NODE_ENV: 'production' }), /NODE_ENV=test/);
  assert.is(loadConfig({ CHATSVC_OUTBOUND_ALLOW_LOOPBACK: '1', NODE_ENV: 'test' }).chat.outbound.allowLoopback, true);
  assert.is(loadConfig({}).chat.outbound.allowLoopback, false);
  assert.equal(loadConfig({ CHATSVC_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.53' }).chat.outbound.dnsServers, [
    '127.0.0.1:5353',
    '10.0.0.53',
  ]);
});

test('without the switch: loopback by address, by name, on any port, is refused before a connection', async () => {
  let hits = 0;
  const server = http.createServer((_req, res) => {
    hits += 1;
    res.end('<title>x</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const options = {
    policy: { allowLoopback: false, dnsServers: [] },
    maxBytes: 1024,
    timeoutMs: 2000,
    maxRedirects: 5,
    accept: () => true,
  };
  try {
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      'http://localhost/',
      'http://127.0.0.1/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'ftp://example.com/',
      'http://u:p@example.com/',
    ]) {
      const error = await guardedFetch(url, options).then(
        () => null,
        (e) => e,
      );
      assert.ok(error instanceof OutboundError, url);
      assert.is(error.code, 'destination_not_allowed', url);
    }
    assert.is(hits, 0);
  } finally {
    server.close();
  }
});

test.run();
