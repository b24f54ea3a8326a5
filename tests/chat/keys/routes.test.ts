// Prekey bundles and uploads: one one-time prekey per fetch (never the same one twice, even
// under concurrent fetches), none once exhausted, signed prekey rotation with a verified
// signature and a grace period, batches of at most 200 with ids unique per account.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateOneTimePrekeys, generateSignedPrekey } from '../../../crypto/e2ee/index.ts';
import {
  bearer,
  eventCount,
  expectError,
  registerChat,
  uniqueName,
  wire,
  type ChatAccount,
} from '../../support/chat.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';

interface Ctx {
  s: TestServices;
  gina: ChatAccount;
  hank: ChatAccount;
}
const test = suite<Ctx>('chat keys: bundles, the one-time-prekey race, uploads');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_keys', { CHATSVC_AUTH_RATE_PER_MIN: '100000', CHATSVC_API_RATE_PER_SEC: '1000' });
  ctx.gina = await registerChat(ctx.s.chat, uniqueName('gina'), { oneTime: 3 });
  ctx.hank = await registerChat(ctx.s.chat, uniqueName('hank'), { oneTime: 30 });
});
test.after(async ({ s }) => s?.close());

const bundle = (s: TestServices, of: ChatAccount, by: ChatAccount) =>
  http(`${s.chat}/api/keys/${of.id}/bundle`, { headers: bearer(by) });

test("a bundle is the spec's shape: identity key, signed prekey, one one-time prekey", async ({ s, gina, hank }) => {
  const r = await bundle(s, gina, hank);
  assert.is(r.status, 200);
  assert.equal(Object.keys(r.body).sort(), ['identity_key', 'one_time_prekey', 'signed_prekey']);
  assert.equal(r.body.identity_key, wire(gina.keys.identity.publicKey));
  assert.equal(r.body.signed_prekey, {
    key_id: 1,
    public_key: wire(gina.keys.signedPrekey.publicKey),
    signature: wire(gina.keys.signedPrekey.signature),
  });
  assert.equal(r.body.one_time_prekey, { key_id: 1, public_key: wire(gina.keys.oneTimePrekeys[0]!.publicKey) });
});

test('each fetch hands out a different one-time prekey, then none when exhausted', async ({ s, gina, hank }) => {
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await bundle(s, gina, hank)).body.one_time_prekey?.key_id ?? null);
  assert.equal(ids, [2, 3, null]);
  const count = await http(`${s.chat}/api/keys/prekeys/count`, { headers: bearer(gina) });
  assert.equal(count.body, { count: 0 });
});

test('the race: concurrent fetches never get the same one-time prekey', async ({ s, gina, hank }) => {
  const fetches = await Promise.all(Array.from({ length: 12 }, () => bundle(s, hank, gina)));
  for (const f of fetches) assert.is(f.status, 200, f.text);
  const ids = fetches.map((f) => f.body.one_time_prekey.key_id);
  assert.is(new Set(ids).size, 12, `duplicates in ${ids}`);
  assert.equal((await http(`${s.chat}/api/keys/prekeys/count`, { headers: bearer(hank) })).body, { count: 18 });
  const { rows } = await s.db.pool.query(
    `SELECT count(*)::int AS n FROM events WHERE type = 'PrekeyConsumed' AND data->>'user_id' = $1`,
    [hank.id],
  );
  assert.is(rows[0].n, 12);
});

test('unknown users, malformed ids and anonymous callers', async ({ s, gina }) => {
  expectError(
    await http(`${s.chat}/api/keys/00000000-0000-4000-8000-000000000000/bundle`, { headers: bearer(gina) }),
    404,
  );
  expectError(await http(`${s.chat}/api/keys/not-a-uuid/bundle`, { headers: bearer(gina) }), 404);
  expectError(await http(`${s.chat}/api/keys/${gina.id}/bundle`), 401);
  expectError(await http(`${s.chat}/api/keys/prekeys/count`), 401);
  expectError(await http(`${s.chat}/api/keys/prekeys/one-time`, { json: { prekeys: [] } }), 401);
  expectError(await http(`${s.chat}/api/keys/prekeys/signed`, { json: {} }), 401);
});

test('one-time upload: a batch of at most 200, ids unique within it and across uploads', async ({ s, gina }) => {
  const keys = generateOneTimePrekeys(100, 200).map((k) => ({ key_id: k.keyId, public_key: wire(k.publicKey) }));
  const r = await http(`${s.chat}/api/keys/prekeys/one-time`, { headers: bearer(gina), json: { prekeys: keys } });
  assert.is(r.status, 200);
  assert.equal(r.body, { count: 200 });
  const before = await eventCount(s.db.pool);
  const extra = { key_id: 999, public_key: wire(generateOneTimePrekeys(999, 1)[0]!.publicKey) };
  expectError(
    await http(`${s.chat}/api/keys/prekeys/one-time`, { headers: bearer(gina), json: { prekeys: [...keys, extra] } }),
    400,
  ); // 201
  expectError(
    await http(`${s.chat}/api/keys/prekeys/one-time`, { headers: bearer(gina), json: { prekeys: [extra, extra] } }),
    400,
  );
  expectError(await http(`${s.chat}/api/keys/prekeys/one-time`, { headers: bearer(gina), json: { prekeys: [] } }), 400);
  expectError(
    await http(`${s.chat}/api/keys/prekeys/one-time`, {
      headers: bearer(gina),
      json: { prekeys: [{ key_id: 5, public_key: [1, 2, 3] }] },
    }),
    400,
  );
  // Id 1 was uploaded at registration (and consumed since): ids stay unique per account.
  const reused = await http(`${s.chat}/api/keys/prekeys/one-time`, {
    headers: bearer(gina),
    json: { prekeys: [{ ...extra, key_id: 1 }] },
  });
  expectError(reused, 409);
  assert.equal(reused.body.key_ids, [1]);
  assert.is(await eventCount(s.db.pool), before);
  assert.equal((await http(`${s.chat}/api/keys/prekeys/count`, { headers: bearer(gina) })).body, { count: 200 });
});

test('signed prekey: the signature must verify; rotation keeps the previous one for 7 days; the bundle serves the new one', async ({
  s,
  gina,
  hank,
}) => {
  const next = generateSignedPrekey(gina.keys.identity, 2);
  const body = { key_id: 2, public_key: wire(next.publicKey), signature: wire(next.signature) };
  const before = await eventCount(s.db.pool);
  const foreign = generateSignedPrekey(hank.keys.identity, 2);
  expectError(
    await http(`${s.chat}/api/keys/prekeys/signed`, {
      headers: bearer(gina),
      json: { ...body, signature: wire(foreign.signature) },
    }),
    400,
  );
  expectError(
    await http(`${s.chat}/api/keys/prekeys/signed`, {
      headers: bearer(gina),
      json: { ...body, public_key: wire(foreign.publicKey) },
    }),
    400,
  );
  expectError(
    await http(`${s.chat}/api/keys/prekeys/signed`, {
      headers: bearer(gina),
      json: { ...body, signature: body.signature.slice(1) },
    }),
    400,
  );
  const sameId = generateSignedPrekey(gina.keys.identity, 1);
  expectError(
    await http(`${s.chat}/api/keys/prekeys/signed`, {
      headers: bearer(gina),
      json: { key_id: 1, public_key: wire(sameId.publicKey), signature: wire(sameId.signature) },
    }),
    409,
  );
  assert.is(await eventCount(s.db.pool), before);

  const r = await http(`${s.chat}/api/keys/prekeys/signed`, { headers: bearer(gina), json: body });
  assert.is(r.status, 200);
  assert.is(r.body.key_id, 2);
  assert.is(r.body.previous_key_id, 1);
  const grace = Date.parse(r.body.previous_valid_until) - s.clock.now().getTime();
  assert.ok(grace > 6.9 * 86_400_000 && grace <= 7 * 86_400_000, String(grace));
  // Repeating the same upload is harmless.
  assert.is((await http(`${s.chat}/api/keys/prekeys/signed`, { headers: bearer(gina), json: body })).status, 200);
  const b = await bundle(s, gina, hank);
  assert.equal(b.body.signed_prekey, body);
});

test.run();
