// Signed manifests: DSSE over the exact payload bytes, strict Ed25519 (small-order keys and
// non-canonical signatures refused), and every refusal code of a verified payload. Also the
// request signatures of the sidecar API and the check schedule's parsing.

import { ed25519 } from '@noble/curves/ed25519.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { checkReleasePublicKey, pae, SignatureError, verifyEnvelope } from '../../crypto/release-signature.ts';
import { signRequest, signResponse } from '../../crypto/request-signature.ts';
import { ManifestRefusal, MANIFEST_MAX_BYTES } from '../../domain/updates/manifest.ts';
import { DEFAULT_CHECK_INTERVAL_SECS, nextCheckDelayMs, parseCheckInterval } from '../../domain/updates/schedule.ts';
import { loadReleaseKey, PINNED_RELEASE_PUBLIC_KEY_HEX } from '../../infra/updates/release-key.ts';
import { verifyManifestEnvelope } from '../../infra/updates/manifest-source.ts';
import { payload, releaseKeys, sign, type ReleaseKeys } from '../support/updates.ts';

const test = suite<{ keys: ReleaseKeys; pub: Uint8Array }>('updates: manifests, signatures, schedule');
test.before(async (ctx) => {
  ctx.keys = await releaseKeys();
  ctx.pub = ed25519.getPublicKey(ctx.keys.secretKey);
});

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof ManifestRefusal) return error.code;
    throw error;
  }
  return 'accepted';
};
const expect = { channel: 'stable', now: new Date(), highestVerified: null };

test('PAE is DSSE v1: "DSSEv1" SP len SP type SP len SP body', () => {
  assert.is(new TextDecoder().decode(pae('t', new TextEncoder().encode('hello'))), 'DSSEv1 1 t 5 hello');
});

test('a signed manifest verifies; the exact payload bytes are what was signed (whitespace included)', ({
  keys,
  pub,
}) => {
  const text = JSON.stringify(payload(), null, 3);
  const m = verifyManifestEnvelope(sign(keys, text), pub, expect);
  assert.is(m.version, '9.0.0');
  const envelope = sign(keys, text);
  envelope.payload = Buffer.from(JSON.stringify(payload())).toString('base64'); // same JSON, other bytes
  assert.is(
    refusal(() => verifyManifestEnvelope(envelope, pub, expect)),
    'manifest_signature_invalid',
  );
});

test('another key, a flipped signature bit, a wrong payloadType: manifest_signature_invalid', async ({ keys, pub }) => {
  const other = await releaseKeys();
  assert.is(
    refusal(() => verifyManifestEnvelope(sign(other, payload()), pub, expect)),
    'manifest_signature_invalid',
  );
  const e = sign(keys, payload());
  const sig = Buffer.from(e.signatures[0]!.sig, 'base64');
  sig[5]! ^= 1;
  assert.is(
    refusal(() => verifyManifestEnvelope({ ...e, signatures: [{ sig: sig.toString('base64') }] }, pub, expect)),
    'manifest_signature_invalid',
  );
  assert.is(
    refusal(() => verifyManifestEnvelope({ ...sign(keys, payload()), payloadType: 'application/json' }, pub, expect)),
    'manifest_signature_invalid',
  );
});

test('a non-canonical signature (S + L) is refused under zip215: false', ({ keys, pub }) => {
  const e = sign(keys, payload());
  const sig = Buffer.from(e.signatures[0]!.sig, 'base64');
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  let s = 0n;
  for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(sig[32 + i]!);
  const bumped = s + L;
  for (let i = 0; i < 32; i++) sig[32 + i] = Number((bumped >> BigInt(8 * i)) & 0xffn);
  assert.is(
    refusal(() => verifyManifestEnvelope({ ...e, signatures: [{ sig: sig.toString('base64') }] }, pub, expect)),
    'manifest_signature_invalid',
  );
});

test('small-order and malformed public keys are refused', () => {
  const identity = new Uint8Array(32);
  identity[0] = 1; // the identity point: small order
  assert.throws(
    () => checkReleasePublicKey(identity),
    (e: unknown) => e instanceof SignatureError && e.code === 'invalid_key',
  );
  assert.throws(
    () => checkReleasePublicKey(new Uint8Array(31)),
    (e: unknown) => e instanceof SignatureError,
  );
  assert.throws(
    () => verifyEnvelope({ payloadType: 'x', payload: '', signatures: [] }, identity),
    (e: unknown) => e instanceof SignatureError && e.code === 'invalid_key',
  );
});

test('channel, expiry (freeze attack), rollback and malformed payloads have their own codes', ({ keys, pub }) => {
  assert.is(
    refusal(() => verifyManifestEnvelope(sign(keys, payload({ channel: 'canary' })), pub, expect)),
    'manifest_channel_mismatch',
  );
  assert.is(
    refusal(() =>
      verifyManifestEnvelope(
        sign(keys, payload({ expires_at: new Date(expect.now.getTime() - 1000).toISOString() })),
        pub,
        expect,
      ),
    ),
    'manifest_expired',
  );
  assert.is(
    refusal(() =>
      verifyManifestEnvelope(sign(keys, payload({ version: '8.9.9' })), pub, { ...expect, highestVerified: '9.0.0' }),
    ),
    'manifest_rollback',
  );
  assert.is(
    refusal(() =>
      verifyManifestEnvelope(sign(keys, payload({ version: '9.0.0' })), pub, { ...expect, highestVerified: '9.0.0' }),
    ),
    'accepted',
  );
  for (const bad of [
    { schema: 2 },
    { version: 'nine' },
    { image: { repository: 'r', digest: 'sha256:zz' } },
    { artifact: { url: 'ftp://x', sha256: 'cd'.repeat(32) } },
    { requirements: [{ id: 'a', kind: 'magic', target: 't', action: 'a' }] },
    {
      requirements: [
        { id: 'a', kind: 'env', target: 't', action: 'a' },
        { id: 'a', kind: 'env', target: 'u', action: 'a' },
      ],
    },
    { migrations: 'x' },
    { expires_at: 'soon' },
  ]) {
    assert.is(
      refusal(() => verifyManifestEnvelope(sign(keys, payload(bad)), pub, expect)),
      'manifest_malformed',
      JSON.stringify(bad),
    );
  }
  assert.is(
    refusal(() => verifyManifestEnvelope(sign(keys, 'not json'), pub, expect)),
    'manifest_malformed',
  );
  assert.is(
    refusal(() => verifyManifestEnvelope(sign(keys, payload({ pad: 'x'.repeat(MANIFEST_MAX_BYTES) })), pub, expect)),
    'manifest_malformed',
  );
  assert.is(
    refusal(() => verifyManifestEnvelope({ payload: 1 }, pub, expect)),
    'manifest_malformed',
  );
});

test('the release key is pinned; ORCH_UPDATER_PUBLIC_KEY_FILE replaces it and says so', ({ keys }) => {
  assert.is(Buffer.from(loadReleaseKey(null).publicKey).toString('hex'), PINNED_RELEASE_PUBLIC_KEY_HEX);
  const lines: unknown[] = [];
  const log = { warn: (...a: unknown[]) => lines.push(a) } as never;
  assert.is(Buffer.from(loadReleaseKey(keys.publicKeyFile, log).publicKey).toString('hex'), keys.publicKeyHex);
  assert.is(lines.length, 1);
});

test('request and response signatures cover every part', () => {
  const token = new TextEncoder().encode('k'.repeat(32));
  const base = { method: 'POST', pathAndQuery: '/v1/apply?x=1', timestamp: '100', nonce: 'ab'.repeat(16), body: '{}' };
  const sig = signRequest(token, base);
  assert.match(sig, /^v1=[0-9a-f]{64}$/);
  for (const change of [
    { method: 'GET' },
    { pathAndQuery: '/v1/apply?x=2' },
    { timestamp: '101' },
    { nonce: 'cd'.repeat(16) },
    { body: '{ }' },
  ]) {
    assert.is.not(signRequest(token, { ...base, ...change }), sig);
  }
  assert.is.not(
    signResponse(token, { status: 200, requestNonce: base.nonce, timestamp: '100', body: '{}' }),
    signResponse(token, { status: 200, requestNonce: 'ef'.repeat(16), timestamp: '100', body: '{}' }),
  );
});

test('ORCH_UPDATES_CHECK_INTERVAL_SECS: default 6 h, floor 900, off/0, garbage refused; jitter 0-10%', () => {
  assert.equal(parseCheckInterval(undefined), { background: true, intervalSecs: DEFAULT_CHECK_INTERVAL_SECS });
  assert.equal(parseCheckInterval('60'), { background: true, intervalSecs: 900 });
  assert.equal(parseCheckInterval('3600'), { background: true, intervalSecs: 3600 });
  assert.is(parseCheckInterval('off').background, false);
  assert.is(parseCheckInterval('0').background, false);
  assert.is(parseCheckInterval('OFF').background, false);
  for (const bad of ['soon', '-5', '1.5', '6h']) assert.throws(() => parseCheckInterval(bad));
  const six = parseCheckInterval(undefined);
  assert.is(nextCheckDelayMs(six, 0), 6 * 3_600_000);
  assert.is(nextCheckDelayMs(six, 0.999999), Math.round(6.6 * 3_600_000 * 0.999999 + 6 * 3_600_000 * 0.000001));
  assert.ok(nextCheckDelayMs(six, 1) <= 6.6 * 3_600_000);
});

test.run();
