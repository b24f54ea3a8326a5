// The update routes of both services, in-process, against a real manifest host and the real
// sidecar app (stub runtime) on loopback: status, checks (404 channel, verified, refused, one a
// minute), starting an apply and its refusals, the apply's progress from the sidecar and from
// the log, and the write gate during maintenance.

import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { UpdaterLog } from '../../infra/updater/log-writer.ts';
import { bearer, registerChat, type ChatAccount } from '../support/chat.ts';
import { browser, createAccount, login, type Account, type Session } from '../support/principals.ts';
import { http, loggedEvents, startTestApps, type TestServices } from '../support/services.ts';
import { startSidecar, stopSidecar, StubRuntime, type Sidecar } from '../support/stub-runtime.ts';
import { FakeServices, payload, releaseKeys, sign, StaticHost, type ReleaseKeys } from '../support/updates.ts';
import { until } from '../support/until.ts';

const ADMIN_KEY = 'orch_updates-admin-key-000000000000000000';
const admin = { 'X-API-Key': ADMIN_KEY };

interface Ctx {
  s: TestServices;
  keys: ReleaseKeys;
  host: StaticHost;
  services: FakeServices;
  sc: Sidecar;
  adminSession: Session;
  adminAccount: Account;
  user: Account;
  userSession: Session;
  chatAdmin: ChatAccount;
  chatUser: ChatAccount;
}
const test = suite<Ctx>('updates: routes');

test.before(async (ctx) => {
  ctx.keys = await releaseKeys();
  ctx.host = await new StaticHost().start();
  ctx.services = await new FakeServices().start();
  ctx.services.version = '0.1.0';
  ctx.s = await startTestApps('updates_routes', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_UPDATE_MANIFEST_HOST: ctx.host.url,
    UPDATE_MANIFEST_HOST: ctx.host.url,
    ORCH_UPDATER_PUBLIC_KEY_FILE: ctx.keys.publicKeyFile,
    ORCH_UPDATER_API_TOKEN_FILE: ctx.keys.tokenFile,
    UPDATER_API_TOKEN_FILE: ctx.keys.tokenFile,
    ORCH_UPDATER_URL: 'http://127.0.0.1:9',
    UPDATER_API_URL: 'http://127.0.0.1:9',
  });
  ctx.sc = await startSidecar(ctx.keys, ctx.services, {
    runtime: new StubRuntime(ctx.services, '0.1.0'),
    updaterLog: new UpdaterLog(ctx.s.platform.store),
  });
  // Both services reach this sidecar.
  (ctx.s.platform.updates.sidecars.orch as unknown as { baseUrl: string }).baseUrl = ctx.sc.url;
  (ctx.s.platform.updates.sidecars.chat as unknown as { baseUrl: string }).baseUrl = ctx.sc.url;
  const adminAccount = (ctx.adminAccount = await createAccount(ctx.s, ADMIN_KEY, 'admin'));
  ctx.user = await createAccount(ctx.s, ADMIN_KEY, 'user');
  [ctx.adminSession, ctx.userSession] = await Promise.all([login(ctx.s, adminAccount), login(ctx.s, ctx.user)]);
  ctx.chatAdmin = await registerChat(ctx.s.chat);
  ctx.chatUser = await registerChat(ctx.s.chat);
});
test.after(async ({ s, host, services, sc, keys }) => {
  await stopSidecar(sc);
  await s?.close();
  await host.stop();
  await services.stop();
  await rm(keys.dir, { recursive: true, force: true });
});

const status = (s: TestServices) => http(`${s.orch}/api/v1/admin/updates/status`, { headers: admin });
const check = (s: TestServices) => http(`${s.orch}/api/v1/admin/updates/check`, { method: 'POST', headers: admin });
const nextMinute = (s: TestServices) => s.clock.advance(61_000);

test('status before any check: nothing cached, checks on, the effective interval, the sidecar reachable', async ({
  s,
  sc,
  adminSession,
}) => {
  const r = await status(s);
  assert.is(r.status, 200);
  assert.equal(
    [r.body.current_version, r.body.latest_version, r.body.update_available, r.body.checked_at, r.body.last_error],
    ['0.1.0', null, false, null, null],
  );
  assert.equal([r.body.checks_enabled, r.body.background_check, r.body.check_interval_secs], [true, true, 21600]);
  assert.equal([r.body.sidecar.reachable, r.body.sidecar.url], [true, sc.url]);
  assert.equal(r.body.maintenance, { active: false, read_only: false });
  assert.is((await http(`${s.orch}/api/admin/updates/status`, { headers: browser(s, adminSession) })).status, 200);
});

test('an empty channel (404): latest_version null and no error; a second check within a minute is 429', async ({
  s,
}) => {
  const r = await check(s);
  assert.is(r.status, 200);
  assert.equal([r.body.latest_version, r.body.last_error], [null, null]);
  assert.ok(r.body.checked_at);
  const again = await check(s);
  assert.is(again.status, 429);
  assert.ok(Number(again.headers.get('retry-after')) >= 1);
  nextMinute(s);
});

test('a verified manifest becomes the channel head; a refused one keeps it and reports why', async ({
  s,
  host,
  keys,
}) => {
  host.channel('stable', sign(keys, payload({ version: '0.1.0' })));
  assert.equal((await check(s)).body.latest_version, '0.1.0');
  nextMinute(s);
  host.channel('stable', sign(await releaseKeys(), payload({ version: '0.3.0' })));
  const refused = await check(s);
  assert.equal([refused.body.latest_version, refused.body.last_error.code], ['0.1.0', 'manifest_signature_invalid']);
  nextMinute(s);
  host.channel(
    'stable',
    sign(keys, payload({ version: '0.1.0', expires_at: new Date(Date.now() - 1000).toISOString() })),
  );
  assert.is((await check(s)).body.last_error.code, 'manifest_expired');
  nextMinute(s);
  const events = await loggedEvents(s, { eventTypes: ['UpdateCheckCompleted'] });
  assert.equal(
    events.map((e) => e.data.result),
    ['empty', 'verified', 'failed', 'failed'],
  );
});

test('apply: a key is refused (interactive session only), a user is not admin, the target must be the head and not current', async ({
  s,
  userSession,
  adminSession,
}) => {
  const key = await http(`${s.orch}/api/v1/admin/updates/apply`, { headers: admin, json: { target_version: '0.1.0' } });
  assert.equal([key.status, key.body.error], [403, 'update_apply_requires_interactive_session']);
  const user = await http(`${s.orch}/api/admin/updates/apply`, {
    headers: browser(s, userSession),
    json: { target_version: '0.1.0' },
  });
  assert.is(user.status, 403);
  const noCsrf = await http(`${s.orch}/api/admin/updates/apply`, {
    headers: { ...browser(s, adminSession), 'x-csrf-token': 'wrong' },
    json: { target_version: '0.1.0' },
  });
  assert.equal([noCsrf.status, noCsrf.body.error], [403, 'csrf_failed']);
  const current = await http(`${s.orch}/api/admin/updates/apply`, {
    headers: browser(s, adminSession),
    json: { target_version: '0.1.0' },
  });
  assert.equal([current.status, current.body.error], [409, 'already_current']);
  const notHead = await http(`${s.orch}/api/admin/updates/apply`, {
    headers: browser(s, adminSession),
    json: { target_version: '0.2.0' },
  });
  assert.equal([notHead.status, notHead.body.error, notHead.body.head], [409, 'target_not_channel_head', '0.1.0']);
  const invalid = await http(`${s.orch}/api/admin/updates/apply`, {
    headers: browser(s, adminSession),
    json: { target: '0.2.0' },
  });
  assert.is(invalid.status, 400);
});

test('apply the head: 202, audit update_applied, the sidecar runs it, progress live and then from the log', async ({
  s,
  host,
  keys,
  adminSession,
  adminAccount,
  sc,
}) => {
  host.channel('stable', sign(keys, payload({ version: '0.2.0', migrations: ['001_events'] })));
  assert.is((await check(s)).body.latest_version, '0.2.0');
  nextMinute(s);
  const st = await status(s);
  assert.equal([st.body.latest_version, st.body.update_available], ['0.2.0', true]);
  const r = await http(`${s.orch}/api/admin/updates/apply`, {
    headers: browser(s, adminSession),
    json: { target_version: '0.2.0' },
  });
  assert.is(r.status, 202, r.text);
  assert.is(r.body.state, 'verifying_manifest');
  const [audit] = await loggedEvents(s, { eventTypes: ['UpdateApplyRequested'] });
  assert.equal(
    [audit!.data.action, audit!.data.apply_id, audit!.data.target_version],
    ['update_applied', r.body.apply_id, '0.2.0'],
  );
  // A security event on this service: in its audit log, with who asked and what for.
  const entries = (await http(`${s.orch}/api/v1/agent-chat/audit`, { headers: admin })).body.filter(
    (e: { event_type: string }) => e.event_type === 'update_applied',
  );
  assert.equal(
    entries.map((e: any) => [e.severity, e.profile_slug, e.detail, e.actor]),
    [
      [
        'info',
        null,
        {
          apply_id: r.body.apply_id,
          target_version: '0.2.0',
          from_version: '0.1.0',
          requested_by: adminAccount.username,
        },
        { kind: 'user', id: adminAccount.id },
      ],
    ],
  );
  await sc.executor.settled(r.body.apply_id);
  const detail = await http(`${s.orch}/api/v1/admin/updates/apply/${r.body.apply_id}`, { headers: admin });
  assert.is(detail.status, 200);
  assert.equal(
    [detail.body.state, detail.body.outcome, detail.body.phase, detail.body.to_version],
    ['succeeded', 'success', null, '0.2.0'],
  );
  assert.ok(detail.body.events.some((e: { step: string }) => e.step === 'health_check_passed'));
  // The journal went into the log under its own ids; the read model agrees with the sidecar.
  await s.platform.commands.awaitProjections((await s.platform.store.headPosition())!, ['UpdateApplyJournaled']);
  const journaled = await loggedEvents(s, { eventTypes: ['UpdateApplyJournaled'] });
  assert.equal(
    journaled.map((e) => e.id),
    sc.journal.of(r.body.apply_id).map((e) => e.id),
  );
  const list = await http(`${s.orch}/api/v1/admin/updates/applies?limit=5`, { headers: admin });
  assert.equal(
    [list.body.total, list.body.applies[0].apply_id, list.body.applies[0].outcome],
    [1, r.body.apply_id, 'success'],
  );
  const maintenance = (await loggedEvents(s)).filter((e) => e.type.startsWith('Maintenance'));
  assert.equal(
    maintenance.map((e) => e.type),
    ['MaintenanceStarted', 'MaintenanceEnded'],
  );
  // The write gate follows the log: it opens once its subscription delivers MaintenanceEnded
  // (the next tests write; a check run before that is refused 503 maintenance).
  await until('the write gate open again', async () => (await status(s)).body.maintenance.active === false, 10_000, 20);
  assert.is((await http(`${s.orch}/api/v1/admin/updates/apply/${randomUUID()}`, { headers: admin })).status, 404);
  assert.is((await http(`${s.orch}/api/v1/admin/updates/apply/nope`, { headers: admin })).status, 404);
});

test('the sidecar down: 503 updater_unavailable, and status says it is unreachable', async ({
  s,
  host,
  keys,
  adminSession,
}) => {
  host.channel('stable', sign(keys, payload({ version: '0.3.0' })));
  assert.is((await check(s)).body.latest_version, '0.3.0');
  nextMinute(s);
  const sidecar = s.platform.updates.sidecars.orch as unknown as { baseUrl: string };
  const url = sidecar.baseUrl;
  sidecar.baseUrl = 'http://127.0.0.1:9';
  try {
    const r = await http(`${s.orch}/api/admin/updates/apply`, {
      headers: browser(s, adminSession),
      json: { target_version: '0.3.0' },
    });
    assert.equal([r.status, r.body.error], [503, 'updater_unavailable']);
    assert.is((await status(s)).body.sidecar.reachable, false);
  } finally {
    sidecar.baseUrl = url;
  }
});

test('maintenance: writes get 503 maintenance with Retry-After, reads go on, health reports read_only', async ({
  s,
}) => {
  s.platform.gate.set(true, randomUUID());
  try {
    const write = await http(`${s.orch}/api/v1/admin/users`, {
      headers: admin,
      json: { username: 'during-maint', email: 'm@example.test', role: 'user' },
    });
    assert.equal([write.status, write.body.error], [503, 'maintenance']);
    assert.is(write.headers.get('retry-after'), '30');
    assert.is((await http(`${s.orch}/api/v1/admin/users`, { headers: admin })).status, 200);
    assert.equal((await http(`${s.orch}/api/v1/health`)).body.maintenance, { active: true, read_only: true });
    assert.equal((await http(`${s.chat}/api/health`)).body.maintenance, { active: true, read_only: true });
    assert.equal((await http(`${s.registry}/health`)).body.maintenance, { active: true, read_only: true });
  } finally {
    s.platform.gate.set(false, null);
  }
  const after = await http(`${s.orch}/api/v1/admin/users`, {
    headers: admin,
    json: { username: 'after-maint', email: 'a@example.test', role: 'user' },
  });
  assert.is(after.status, 201);
});

test('chat: admin status, check and apply progress; non-admins 403; the same head rules', async ({
  s,
  host,
  keys,
  chatAdmin,
  chatUser,
  sc,
}) => {
  const st = await http(`${s.chat}/api/admin/updates/status`, { headers: bearer(chatAdmin) });
  assert.is(st.status, 200);
  assert.equal([st.body.running_version, st.body.latest_version], ['0.1.0', null]);
  assert.is((await http(`${s.chat}/api/admin/updates/status`, { headers: bearer(chatUser) })).status, 403);
  assert.is((await http(`${s.chat}/api/admin/updates/status`)).status, 401);
  host.channel('stable', sign(keys, payload({ version: '0.4.0' })));
  const checked = await http(`${s.chat}/api/admin/updates/check`, { method: 'POST', headers: bearer(chatAdmin) });
  assert.equal([checked.status, checked.body.latest_version, checked.body.update_available], [200, '0.4.0', true]);
  assert.is(
    (await http(`${s.chat}/api/admin/updates/check`, { method: 'POST', headers: bearer(chatAdmin) })).status,
    429,
  );
  const notHead = await http(`${s.chat}/api/admin/updates/apply`, {
    headers: bearer(chatAdmin),
    json: { target_version: '0.3.0' },
  });
  assert.equal([notHead.status, notHead.body.code, notHead.body.head], [409, 'target_not_channel_head', '0.4.0']);
  assert.is(typeof notHead.body.error, 'string');
  const started = await http(`${s.chat}/api/admin/updates/apply`, {
    headers: bearer(chatAdmin),
    json: { target_version: '0.4.0' },
  });
  assert.is(started.status, 202, started.text);
  await sc.executor.settled(started.body.apply_id);
  const progress = await http(`${s.chat}/api/admin/updates/apply/${started.body.apply_id}`, {
    headers: bearer(chatAdmin),
  });
  // The stub runtime now reports 0.4.0 running: from the sidecar's journal, source chat.
  assert.equal([progress.status, progress.body.state, progress.body.outcome], [200, 'succeeded', 'success']);
  assert.is(
    (await http(`${s.chat}/api/admin/updates/apply/${started.body.apply_id}`, { headers: bearer(chatUser) })).status,
    403,
  );
  // The chat's release is in the chat's admin audit, not the orchestration's.
  const chatAudit = (await http(`${s.chat}/api/admin/audit-log?action=update_applied`, { headers: bearer(chatAdmin) }))
    .body.entries;
  assert.ok(
    chatAudit.some((e: { target_id: string }) => e.target_id === started.body.apply_id),
    JSON.stringify(chatAudit),
  );
  const orchAudit = (await http(`${s.orch}/api/v1/agent-chat/audit?limit=100`, { headers: admin })).body;
  assert.not.ok(
    orchAudit.some((e: { detail: { apply_id?: string } }) => e.detail.apply_id === started.body.apply_id),
    'not in the orchestration audit',
  );
});

test('no manifest host: checks off, status says so, a check is 409', async () => {
  const s = await startTestApps('updates_routes_off', {
    ADMIN_API_KEY: ADMIN_KEY,
    ORCH_UPDATES_CHECK_INTERVAL_SECS: 'off',
  });
  try {
    const st = await status(s);
    assert.equal(
      [st.body.checks_enabled, st.body.background_check, st.body.check_interval_secs, st.body.last_error.code],
      [false, false, null, 'update_checks_off'],
    );
    const r = await check(s);
    assert.equal([r.status, r.body.error], [409, 'update_checks_off']);
  } finally {
    await s.close();
  }
});

test.run();
