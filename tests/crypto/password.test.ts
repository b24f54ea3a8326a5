import { Buffer } from 'node:buffer';
import { scryptSync } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hashPassword, needsRehash, PASSWORD_PARAMS, verifyPassword } from '../../crypto/password.ts';

// Each hash or verify at the real parameters costs ~0.4 s, so this suite makes three of them
// and uses cheap, hand-built legacy hashes (N=2^10) for everything else.
const test = suite('crypto/password');

const password = 'correct horse battery staple';

// An encoding made with other (older, weaker) parameters, built independently of the module.
function legacyHash(plain: string, logN = 10, r = 8, p = 1): string {
  const salt = Buffer.from('0123456789abcdef');
  const hash = scryptSync(Buffer.from(plain, 'utf8'), salt, 32, { N: 2 ** logN, r, p });
  return `scrypt$${logN}$${r}$${p}$${salt.toString('base64url')}$${hash.toString('base64url')}`;
}

let encoded = '';

test('hashPassword encodes its parameters and does not block the event loop', async () => {
  let loopRan = false;
  setImmediate(() => (loopRan = true));
  encoded = await hashPassword(password);
  // A synchronous (main-thread) hash would resolve before any immediate could run.
  assert.ok(loopRan, 'the event loop must keep running while scrypt works');

  const [scheme, logN, r, p, salt, hash, ...rest] = encoded.split('$');
  assert.is(rest.length, 0);
  assert.is(scheme, 'scrypt');
  assert.is(Number(logN), PASSWORD_PARAMS.logN);
  assert.is(Number(r), PASSWORD_PARAMS.r);
  assert.is(Number(p), PASSWORD_PARAMS.p);
  assert.equal([PASSWORD_PARAMS.logN, PASSWORD_PARAMS.r, PASSWORD_PARAMS.p], [17, 8, 1]);
  assert.is(Buffer.from(salt!, 'base64url').length, 16);
  assert.is(Buffer.from(hash!, 'base64url').length, 32);
  assert.not.ok(encoded.includes(password));
});

test('verifyPassword: right password true, wrong password false', async () => {
  assert.ok(await verifyPassword(password, encoded));
  assert.not.ok(await verifyPassword(`${password}!`, encoded));
});

test('hashes made with older parameters still verify, and ask for a rehash', async () => {
  const old = legacyHash(password);
  assert.ok(await verifyPassword(password, old));
  assert.not.ok(await verifyPassword('wrong', old));
  assert.ok(needsRehash(old));
  // needsRehash only reads the parameters, so edited encodings are enough here.
  assert.ok(needsRehash(encoded.replace('$17$8$1$', '$17$4$1$')));
  assert.ok(needsRehash(encoded.replace('$17$8$1$', '$18$8$1$')));
  assert.ok(needsRehash(encoded.replace('$17$8$1$', '$17$8$2$')));
  assert.not.ok(needsRehash(encoded));
});

test('passwords are NFKC-normalised: composed and decomposed accents match', async () => {
  const old = legacyHash('caf\u00e9'.normalize('NFKC'));
  assert.ok(await verifyPassword('caf\u00e9', old));
  assert.ok(await verifyPassword('cafe\u0301', old));
});

test('malformed encodings verify as false, never throw, and need a rehash', async () => {
  const good = legacyHash(password);
  const parts = good.split('$');
  const malformed = [
    '',
    'not a hash',
    'bcrypt$2b$10$abcdefghijklmnopqrstuv',
    good.replace(/^scrypt/, 'argon2id'),
    parts.slice(0, 5).join('$'),
    `${good}$extra`,
    good.replace('$10$', '$abc$'),
    good.replace('$10$', '$-1$'),
    good.replace('$10$', '$010$'),
    good.replace('$10$', '$64$'), // absurd cost: refused before any work
    good.replace('$8$1$', '$8$0$'),
    [...parts.slice(0, 4), 'not*base64', parts[5]].join('$'),
    [...parts.slice(0, 5), ''].join('$'),
    [...parts.slice(0, 5), 'AAAA'].join('$'), // 3-byte hash: too short to be one of ours
  ];
  for (const bad of malformed) {
    assert.is(await verifyPassword(password, bad), false, `expected false for ${JSON.stringify(bad)}`);
    assert.ok(needsRehash(bad));
  }
});

test.run();
