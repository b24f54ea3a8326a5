// Pure configuration rules: the admin-role opt-out's whole value table, and trusted-peer CIDRs.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { trustedNets } from '../../../api/orchestration/auth/trusted-nets.ts';
import { loadConfig, optIn, optOut } from '../../../infra/config.ts';

const test = suite('config flags and trusted networks');

test('ORCH_ENFORCE_ADMIN_ROLE: only an explicit falsy value turns enforcement off', () => {
  const table: [string | undefined, boolean][] = [
    [undefined, true],
    ['', true],
    ['   ', true],
    ['1', true],
    ['true', true],
    ['yes', true],
    ['on', true],
    ['enabled', true],
    ['nope', true],
    ['2', true],
    ['0', false],
    ['false', false],
    ['FALSE', false],
    ['False', false],
    ['no', false],
    ['NO', false],
    ['off', false],
    ['Off', false],
    [' off ', false],
  ];
  for (const [value, enforced] of table) {
    assert.is(optOut(value), enforced, `value ${JSON.stringify(value)}`);
    assert.is(
      loadConfig(value === undefined ? {} : { ORCH_ENFORCE_ADMIN_ROLE: value }).enforceAdminRole,
      enforced,
      `config ${JSON.stringify(value)}`,
    );
  }
});

test('opt-in flags accept 1, true, yes, on in any case and nothing else', () => {
  for (const v of ['1', 'true', 'TRUE', 'yes', 'On']) assert.ok(optIn(v), v);
  for (const v of [undefined, '', '0', 'false', 'enabled', 'y']) assert.not.ok(optIn(v), String(v));
});

test('trusted nets: IPv4 and IPv6 CIDRs, single addresses, IPv4-mapped IPv6 peers match IPv4 ranges', () => {
  const trusted = trustedNets(['10.0.0.0/8', '192.168.1.5', 'fd00::/8', '::1/128']);
  for (const peer of ['10.1.2.3', '::ffff:10.9.9.9', '192.168.1.5', '::ffff:192.168.1.5', 'fd12::1', '::1'])
    assert.ok(trusted(peer), peer);
  for (const peer of ['11.0.0.1', '192.168.1.6', '::ffff:11.0.0.1', 'fe80::1', '127.0.0.1', '', undefined, 'garbage'])
    assert.not.ok(trusted(peer), String(peer));
  const none = trustedNets([]);
  assert.not.ok(none('127.0.0.1'));
});

test('trusted nets: a malformed entry is a configuration error naming it', () => {
  for (const bad of ['10.0.0.0/33', 'fd00::/129', 'not-an-ip/8', '10.0.0.0/8/1', '10.0.0.0/x']) {
    assert.throws(
      () => trustedNets([bad]),
      (e: Error) => e.message.includes(bad),
    );
  }
});

test.run();
