// The sidecar over a real socket, with a stub runtime: signed requests (forged, stale, replayed
// refused; answers signed), the state machine's outcomes (success, pre-flight failures with
// nothing touched, rollback, frozen and unfreeze, delivery_incomplete), one apply at a time, a
// retried apply id, and resuming a killed sidecar's journal.

import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { parseFailpoints } from '../../infra/updater/executor.ts';
import { SidecarClient, SidecarUnavailable } from '../../infra/updates/sidecar-client.ts';
import { startSidecar, stopSidecar as stop, type Sidecar } from '../support/stub-runtime.ts';
import { FakeServices, payload, releaseKeys, sign, signedFetch, type ReleaseKeys } from '../support/updates.ts';
import { until } from '../support/until.ts';

interface Ctx {
  keys: ReleaseKeys;
  services: FakeServices;
  sc: Sidecar;
}
const test = suite<Ctx>('updates: the sidecar');
test.before(async (ctx) => {
  ctx.keys = await releaseKeys();
  ctx.services = await new FakeServices().start();
});
test.before.each(async (ctx) => {
  ctx.services.version = '1.0.0';
  ctx.services.migration = '001_events';
  ctx.services.readOnly = true;
  ctx.sc = await startSidecar(ctx.keys, ctx.services);
});
test.after.each(async ({ sc }) => {
  await stop(sc);
  await rm(sc.dir, { recursive: true, force: true, maxRetries: 5 });
});
test.after(async ({ services, keys }) => {
  await services.stop();
  await rm(keys.dir, { recursive: true, force: true });
});

const apply = (sc: Sidecar, manifest: unknown, id = randomUUID()) =>
  signedFetch(sc.url, 'POST', '/v1/apply', { apply_id: id, manifest, requested_by: 'admin', source: 'orch' });
async function finish(sc: Sidecar, id: string) {
  await sc.executor.settled(id);
  return (await signedFetch(sc.url, 'GET', `/v1/apply/${id}`)).body;
}

test('GET /health needs no signature; every other route does, and every answer is signed', async ({ sc }) => {
  const health = await fetch(`${sc.url}/health`);
  assert.is(health.status, 200);
  assert.ok(health.headers.get('x-orchard-signature'));
  const unsigned = await fetch(`${sc.url}/v1/status`);
  assert.is(unsigned.status, 401);
  assert.is(((await unsigned.json()) as { error: string }).error, 'signature_invalid');
  const ok = await signedFetch(sc.url, 'GET', '/v1/status');
  assert.is(ok.status, 200);
  assert.ok(ok.responseSigned);
});

test('forged, altered, stale and replayed requests: 401 signature_invalid, timestamp_skew, nonce_replayed', async ({
  sc,
}) => {
  const forged = await signedFetch(sc.url, 'GET', '/v1/status', undefined, {
    token: new TextEncoder().encode('x'.repeat(40)),
  });
  assert.equal([forged.status, forged.body.error], [401, 'signature_invalid']);
  const altered = await signedFetch(sc.url, 'GET', '/v1/status', undefined, {
    tamper: (h) => (h['x-orchard-timestamp'] = String(Number(h['x-orchard-timestamp']) + 1)),
  });
  assert.equal([altered.status, altered.body.error], [401, 'signature_invalid']);
  const stale = await signedFetch(sc.url, 'GET', '/v1/status', undefined, {
    timestamp: Math.floor(Date.now() / 1000) - 301,
  });
  assert.equal([stale.status, stale.body.error], [401, 'timestamp_skew']);
  const future = await signedFetch(sc.url, 'GET', '/v1/status', undefined, {
    timestamp: Math.floor(Date.now() / 1000) + 301,
  });
  assert.equal([future.status, future.body.error], [401, 'timestamp_skew']);
  const first = await signedFetch(sc.url, 'GET', '/v1/status');
  assert.is(first.status, 200);
  const replay = await signedFetch(sc.url, 'GET', '/v1/status', undefined, { nonce: first.nonce });
  assert.equal([replay.status, replay.body.error], [401, 'nonce_replayed']);
  const shortNonce = await signedFetch(sc.url, 'GET', '/v1/status', undefined, { nonce: 'abc' });
  assert.is(shortNonce.status, 401);
});

test('the client refuses a forged answer and one signed with another token', async ({ sc, keys }) => {
  const client = new SidecarClient(sc.url, keys.tokenFile, 'T');
  assert.is((await client.status()).version, '1.0.0');
  // A server that is not the sidecar (the fake health host): its answers carry no signature.
  const impostor = new SidecarClient((await new FakeServices().start()).url, keys.tokenFile, 'T');
  try {
    await impostor.status();
    assert.unreachable();
  } catch (error) {
    assert.instance(error, SidecarUnavailable);
  }
  const wrongToken = new SidecarClient(sc.url, `${keys.dir}/missing`, 'T');
  try {
    await wrongToken.status();
    assert.unreachable();
  } catch (error) {
    assert.instance(error, SidecarUnavailable);
  }
});

test('a good manifest: every step journaled, maintenance on then off, outcome success', async ({ sc, keys }) => {
  const id = randomUUID();
  const r = await apply(sc, sign(keys, payload({ version: '1.1.0', migrations: ['001_events', '002_more'] })), id);
  assert.equal([r.status, r.body.state], [202, 'verifying_manifest']);
  const done = await finish(sc, id);
  assert.equal(
    [done.state, done.outcome, done.error, done.to_version, done.from_version],
    ['succeeded', 'success', null, '1.1.0', '1.0.0'],
  );
  // The new release is prepared (loaded beside the old one) before the old one is drained.
  assert.equal(sc.runtime.calls, ['snapshot', 'pull', 'verifyDigest', 'prepare:1.1.0', 'drain', 'migrate', 'recreate']);
  assert.ok(sc.runtime.migratedPrepared, 'the drain left the prepared release alone');
  assert.equal(sc.log.calls, [`start:${id}`, 'delivery', `end:${id}`]);
  const entries = (await signedFetch(sc.url, 'GET', `/v1/apply/${id}/events?after=0`)).body.events as {
    type: string;
    state: string;
  }[];
  const events = entries.map((e) => e.type);
  assert.equal(events, [
    'apply_started',
    'manifest_verify_started',
    'manifest_verified',
    'maintenance_started',
    'maintenance_announced',
    'snapshot_taken',
    'pulled',
    'digest_verified',
    'release_prepared',
    'drained',
    'migrated',
    'health_check_started',
    'health_check_passed',
    'delivery_checked',
    'apply_completed',
  ]);
  // Preparing is still pre-flight: the swap (draining) begins once the release is prepared.
  assert.equal(
    entries.slice(7, 9).map((e) => e.state),
    ['verifying_digest', 'draining'],
  );
  assert.equal(sc.log.journaled, events);
  const later = (await signedFetch(sc.url, 'GET', `/v1/apply/${id}/events?after=13`)).body.events;
  assert.is(later.length, 2);
  // The same apply id again is the same apply.
  const again = await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  assert.equal([again.status, again.body.state], [202, 'succeeded']);
});

test('pre-flight refusals fail with nothing touched: bad signature, expired, older, digest mismatch', async ({
  sc,
  keys,
}) => {
  const other = await releaseKeys();
  const cases: [unknown, string][] = [
    [sign(other, payload({ version: '1.1.0' })), 'manifest_signature_invalid'],
    [sign(keys, payload({ version: '1.1.0', expires_at: new Date(Date.now() - 1).toISOString() })), 'manifest_expired'],
    [sign(keys, payload({ version: '0.9.0' })), 'manifest_rollback'],
    [sign(keys, payload({ version: '1.1.0', channel: 'beta' })), 'manifest_channel_mismatch'],
  ];
  for (const [manifest, code] of cases) {
    const id = randomUUID();
    await apply(sc, manifest, id);
    const done = await finish(sc, id);
    assert.equal([done.state, done.outcome, done.error.code], ['failed', null, code]);
  }
  assert.equal(sc.runtime.calls, []);
  assert.equal(sc.log.calls, []);
  sc.runtime.fail.verifyDigest = 'digest_mismatch';
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  const done = await finish(sc, id);
  assert.equal([done.state, done.outcome, done.error.code], ['failed', null, 'digest_mismatch']);
  assert.equal(sc.runtime.calls, ['snapshot', 'pull', 'verifyDigest']);
  assert.equal(sc.log.calls, [`start:${id}`, `end:${id}`], 'maintenance lifted');
});

test('a release that cannot be prepared fails pre-flight with nothing touched: release_not_ready', async ({
  sc,
  keys,
}) => {
  sc.runtime.fail.prepare = 'release_not_ready';
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  const done = await finish(sc, id);
  assert.equal([done.state, done.outcome, done.error.code], ['failed', null, 'release_not_ready']);
  assert.equal(sc.runtime.calls, ['snapshot', 'pull', 'verifyDigest', 'prepare:1.1.0'], 'never drained');
  assert.equal(sc.log.calls, [`start:${id}`, `end:${id}`], 'maintenance lifted');
  assert.is(sc.runtime.version, '1.0.0');
});

test('maintenance waits until every service is read-only', async ({ sc, keys, services }) => {
  services.readOnly = false;
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  await new Promise((r) => setTimeout(r, 200));
  assert.is(sc.journal.stateOf(id), 'announcing_maintenance');
  assert.equal(sc.runtime.calls, []);
  services.readOnly = true;
  assert.is((await finish(sc, id)).outcome, 'success');
});

test('a failing migration rolls back: restore, restart the prior release, rolled_back', async ({ sc, keys }) => {
  sc.runtime.fail.migrate = 'migration_failed';
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  const done = await finish(sc, id);
  assert.equal([done.state, done.outcome, done.error.code], ['rolled_back', 'rolled_back', 'migration_failed']);
  // The prior release is prepared after the drain, while the snapshot is restored.
  assert.equal(sc.runtime.calls, [
    'snapshot',
    'pull',
    'verifyDigest',
    'prepare:1.1.0',
    'drain',
    'migrate',
    'drain',
    'discardPrepared',
    'prepare:1.0.0',
    'restore',
    'restartPrior:1.0.0',
  ]);
  assert.equal(sc.log.calls, [`start:${id}`, `end:${id}`]);
});

test('a rollback whose prior release cannot be prepared still restarts it (cold)', async ({ sc, keys }) => {
  sc.runtime.fail.migrate = 'migration_failed';
  const prepare = sc.runtime.prepare.bind(sc.runtime);
  sc.runtime.prepare = async (version) => {
    if (version === '1.0.0') {
      sc.runtime.calls.push(`prepare:${version}`);
      throw new Error('cannot load (stub)');
    }
    return prepare(version);
  };
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  const done = await finish(sc, id);
  assert.equal([done.state, done.outcome, done.error.code], ['rolled_back', 'rolled_back', 'migration_failed']);
  assert.equal(sc.runtime.calls.slice(-3), ['prepare:1.0.0', 'restore', 'restartPrior:1.0.0']);
});

test('a release that never answers healthy rolls back after the grace window', async ({ sc, keys }) => {
  const id = randomUUID();
  // Its health reports another migration than the manifest's last.
  await apply(sc, sign(keys, payload({ version: '1.1.0', migrations: ['001_events', '099_never'] })), id);
  sc.runtime.recreate = async (m) => {
    sc.runtime.calls.push('recreate');
    sc.runtime.version = m.version;
  };
  const done = await finish(sc, id);
  assert.equal([done.state, done.outcome, done.error.code], ['rolled_back', 'rolled_back', 'health_check_failed']);
  const events = (await signedFetch(sc.url, 'GET', `/v1/apply/${id}/events`)).body.events.map(
    (e: { type: string }) => e.type,
  );
  assert.ok(events.includes('health_check_failed') && events.includes('rollback_started'));
});

test('a failed restore freezes: maintenance stays, applies are refused until unfrozen', async ({ sc, keys }) => {
  sc.runtime.fail.migrate = 'migration_failed';
  sc.runtime.fail.restore = 'restore_failed';
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  const done = await finish(sc, id);
  assert.equal([done.state, done.outcome, done.error.code], ['frozen', 'frozen', 'restore_failed']);
  assert.equal(sc.log.calls, [`start:${id}`], 'maintenance stays');
  assert.is(sc.runtime.prepared, null, 'the prior release prepared for the restart is stopped again');
  assert.equal(sc.runtime.calls.slice(-3), ['prepare:1.0.0', 'restore', 'discardPrepared']);
  const refused = await apply(sc, sign(keys, payload({ version: '1.1.0' })));
  assert.equal([refused.status, refused.body.error, refused.body.apply_id], [409, 'apply_frozen', id]);
  const wrong = await signedFetch(sc.url, 'POST', `/v1/apply/${randomUUID()}/unfreeze`, { operator: 'ops' });
  assert.is(wrong.status, 404);
  const unfreeze = await signedFetch(sc.url, 'POST', `/v1/apply/${id}/unfreeze`, { operator: 'ops' });
  assert.equal([unfreeze.status, unfreeze.body.unfrozen], [200, true]);
  assert.equal(sc.log.calls, [`start:${id}`, `end:${id}`]);
  assert.is((await signedFetch(sc.url, 'GET', '/v1/status')).body.frozen, null);
  sc.runtime.fail = {};
  const next = await apply(sc, sign(keys, payload({ version: '1.1.0' })));
  assert.is(next.status, 202);
  assert.is((await finish(sc, next.body.apply_id)).outcome, 'success');
});

test('a missing requirement: healthy, outcome delivery_incomplete with the requirement and its action', async ({
  sc,
  keys,
}) => {
  sc.runtime.missing.add('NEW_FEATURE_KEY');
  const id = randomUUID();
  await apply(
    sc,
    sign(
      keys,
      payload({
        version: '1.1.0',
        requirements: [
          { id: 'feature-key', kind: 'env', target: 'NEW_FEATURE_KEY', action: 'set NEW_FEATURE_KEY in compose.yaml' },
          { id: 'other', kind: 'env', target: 'PRESENT', action: 'none' },
        ],
      }),
    ),
    id,
  );
  const done = await finish(sc, id);
  assert.equal([done.state, done.outcome], ['succeeded', 'delivery_incomplete']);
  assert.equal(done.error.requirements, [
    { id: 'feature-key', status: 'missing', action: 'set NEW_FEATURE_KEY in compose.yaml' },
  ]);
  const delivery = (await signedFetch(sc.url, 'GET', '/v1/delivery')).body;
  assert.is(delivery.status, 'incomplete');
  sc.runtime.missing.clear();
  assert.is((await signedFetch(sc.url, 'GET', '/v1/delivery')).body.status, 'complete', 'a fixed compose clears it');
});

test('one apply at a time: 409 apply_in_progress', async ({ sc, keys }) => {
  let release!: () => void;
  sc.runtime.hold = new Promise((r) => (release = r));
  const first = await apply(sc, sign(keys, payload({ version: '1.1.0' })));
  const second = await apply(sc, sign(keys, payload({ version: '1.1.0' })));
  assert.equal([second.status, second.body.error], [409, 'apply_in_progress']);
  release();
  await finish(sc, first.body.apply_id);
});

test('a sidecar stopped mid-swap rolls back when it starts again (recovered); stopped in pre-flight it fails', async ({
  sc,
  keys,
  services,
}) => {
  let release!: () => void;
  sc.runtime.hold = new Promise((r) => (release = r));
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  await until('the apply migrating', async () => sc.journal.stateOf(id) === 'migrating', 5_000, 20);
  assert.is(sc.journal.stateOf(id), 'migrating');
  // A new sidecar on the same journal (the old one is abandoned mid-apply, as after kill -9).
  const restarted = await startSidecar(keys, services, { dir: sc.dir });
  await restarted.executor.settled(id);
  const done = (await signedFetch(restarted.url, 'GET', `/v1/apply/${id}`)).body;
  assert.equal([done.state, done.outcome, done.error.code], ['recovered', 'rolled_back', 'interrupted']);
  assert.ok(restarted.runtime.calls.includes('restore'));
  // Let the abandoned sidecar finish what it was holding before the directory is removed: it
  // still writes its journal, and a write racing the cleanup fails it with ENOTEMPTY.
  release();
  await sc.executor.settled(id);
  await stop(restarted);
});

test('failpoints: an error at a step fails it like a real failure, and is journaled', async ({ keys, services }) => {
  const sc = await startSidecar(keys, services, { failpoints: 'pulling=error' });
  const id = randomUUID();
  await apply(sc, sign(keys, payload({ version: '1.1.0' })), id);
  const done = await finish(sc, id);
  assert.equal([done.state, done.error.code], ['failed', 'failpoint']);
  assert.ok(sc.journal.of(id).some((e) => e.type === 'failpoint_triggered'));
  await stop(sc);
  assert.throws(() => parseFailpoints('pulling=explode'));
});

test.run();
