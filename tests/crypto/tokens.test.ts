import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { constantTimeEqual, generateToken, hashToken, randomId } from '../../crypto/tokens.ts';

const test = suite('crypto/tokens');

test('generateToken: prefix + unpadded base64url of the requested bytes', () => {
  const token = generateToken('orch_');
  assert.match(token, /^orch_[A-Za-z0-9_-]{43}$/);
  assert.match(generateToken('bot_', 48), /^bot_[A-Za-z0-9_-]{64}$/);
  assert.is.not(generateToken('orch_'), token);
});

test('generateToken and randomId refuse fewer than 16 random bytes', () => {
  assert.throws(() => generateToken('orch_', 8), /16/);
  assert.throws(() => randomId(0), /16/);
  assert.throws(() => randomId(16.5), /integer/);
});

test('hashToken: SHA-256 known vectors, lowercase hex', () => {
  assert.is(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.is(hashToken(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  // UTF-8, not UTF-16: SHA-256 of the bytes c3 a9.
  assert.is(hashToken('\u00e9'), '4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c');
});

test('hashToken: deterministic, 64 hex characters, distinct for distinct tokens', () => {
  const token = generateToken('orch_');
  const hash = hashToken(token);
  assert.match(hash, /^[0-9a-f]{64}$/);
  assert.is(hashToken(token), hash);
  assert.is.not(hashToken(`${token}x`), hash);
  assert.not.ok(hash.includes(token));
});

test('constantTimeEqual: equal, different content, different length', () => {
  const token = generateToken('orch_');
  assert.ok(constantTimeEqual(token, `${token}`));
  assert.ok(constantTimeEqual('', ''));
  assert.not.ok(constantTimeEqual(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`));
  assert.not.ok(constantTimeEqual(`X${token.slice(1)}`, token));
  assert.not.ok(constantTimeEqual(token, token.slice(0, -1)));
  assert.not.ok(constantTimeEqual('', 'a'));
  assert.not.ok(constantTimeEqual('a', ''));
  assert.ok(constantTimeEqual('é✓', 'é✓'));
  assert.not.ok(constantTimeEqual('é', 'e'));
});

test('randomId: 16 bytes → 22 base64url characters, unique', () => {
  const ids = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const id = randomId();
    assert.match(id, /^[A-Za-z0-9_-]{22}$/);
    ids.add(id);
  }
  assert.is(ids.size, 1000);
  assert.match(randomId(32), /^[A-Za-z0-9_-]{43}$/);
});

test.run();
