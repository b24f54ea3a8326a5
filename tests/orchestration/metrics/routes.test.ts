// GET /metrics: Prometheus text with requests by route pattern, events appended by type, each
// processor's (projection's, reactor's) checkpoint, lag and last error, and process metrics; a
// Bearer token when ORCH_METRICS_TOKEN is set.

import { appendUnchecked } from '../../support/event-validation.ts';
import { randomUUID } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toAppend } from '../../../infra/commands.ts';
import { chatsvcBots } from '../../../main/chatsvc-bots.ts';
import { allProjections } from '../../../projections/index.ts';
import { backgroundOf } from '../../support/schedule.ts';
import { http, startTestApps, type TestServices } from '../../support/services.ts';
import { until } from '../../support/until.ts';
import { sessionStream } from '../../../domain/orchestration/streams.ts';
import { scheduledStream } from '../../../domain/chat/streams.ts';

const ADMIN_KEY = 'orch_metrics-admin-key-00000000000000000';
const TOKEN = 'metrics-token-0123456789';

/** The value of one series in Prometheus text, or undefined. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const inside = line.slice(name.length + 1, line.lastIndexOf('}'));
    if (wanted.every((w) => inside.split(',').includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

const test = suite<{ s: TestServices }>('GET /metrics');
test.before(async (ctx) => {
  ctx.s = await startTestApps('metrics', { ADMIN_API_KEY: ADMIN_KEY });
});
test.after(async ({ s }) => s?.close());

test('requests by service, route pattern and status; events appended by type; process metrics', async ({ s }) => {
  await http(`${s.orch}/api/v1/health`);
  await http(`${s.orch}/api/v1/admin/users/${randomUUID()}`, {
    method: 'PATCH',
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { role: 'user' },
  });
  await http(`${s.orch}/no/such/route`);
  await http(`${s.chat}/api/health`);
  const r = await http(`${s.orch}/metrics`);
  assert.is(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
  const text = r.text;
  assert.ok(
    sample(text, 'orchard_http_requests_total', {
      service: 'orch',
      method: 'GET',
      route: '/api/v1/health',
      status: '200',
    })! >= 1,
  );
  assert.ok(
    sample(text, 'orchard_http_requests_total', {
      service: 'orch',
      method: 'PATCH',
      route: '/api/v1/admin/users/:user_id',
      status: '404',
    })! >= 1,
  );
  assert.ok(
    sample(text, 'orchard_http_requests_total', {
      service: 'orch',
      method: 'GET',
      route: 'unmatched',
      status: '404',
    })! >= 1,
  );
  assert.ok(
    sample(text, 'orchard_http_requests_total', {
      service: 'chat',
      method: 'GET',
      route: '/api/health',
      status: '200',
    })! >= 1,
  );
  assert.match(text, /orchard_http_request_duration_seconds_bucket\{[^}]*route="\/api\/v1\/health"/);
  assert.not.match(text, new RegExp(`route="[^"]*${'[0-9a-f]{8}-'}`)); // never a raw id in a label
  assert.ok(sample(text, 'orchard_events_appended_total', { type: 'UserCreated' })! >= 1); // the bootstrap admin
  // Process and runtime series keep prom-client's standard names, which stock Node.js dashboards
  // and alerts expect; only our own series carry the orchard_ prefix.
  assert.match(text, /^process_cpu_user_seconds_total /m);
  assert.match(text, /^process_resident_memory_bytes /m);
  assert.match(text, /^nodejs_eventloop_lag_seconds /m);
  assert.match(text, /^nodejs_heap_size_used_bytes /m);
  assert.not.match(text, /^orchard_(process|nodejs)_/m);
});

test('every projection: checkpoint, lag 0 when caught up, active here, no errors', async ({ s }) => {
  // The engine takes each projection's lock in turn at start: on a loaded machine the last ones
  // may still be on their way when this test begins, so wait (bounded) until each is active and caught up.
  let text = '';
  const ready = ({ name }: { name: string }) =>
    sample(text, 'orchard_projection_active', { projection: name }) === 1 &&
    sample(text, 'orchard_projection_lag_events', { projection: name }) === 0;
  await until(
    () =>
      `every projection active and caught up (not yet: ${allProjections
        .filter((p) => !ready(p))
        .map((p) => p.name)
        .join(', ')})`,
    async () => {
      text = (await http(`${s.orch}/metrics`)).text;
      return allProjections.every(ready);
    },
    20_000,
    100,
  );
  for (const { name } of allProjections) {
    assert.is(sample(text, 'orchard_projection_lag_events', { projection: name }), 0, name);
    assert.is(sample(text, 'orchard_projection_active', { projection: name }), 1, name);
    assert.is(sample(text, 'orchard_projection_errors_total', { projection: name }), 0, name);
    assert.ok(
      sample(text, 'orchard_projection_checkpoint_position', { projection: name, part: 'prepare' }) !== undefined,
      name,
    );
  }
  assert.ok(sample(text, 'orchard_projection_checkpoint_position', { projection: 'users', part: 'prepare' })! > 0);
});

test('a projection that cannot apply an event: lag and its last error show', async ({ s }) => {
  // A malformed event (no session hash) in the log: the sessions projection fails on it and stays behind.
  const bad = toAppend(
    { type: 'SessionStarted', data: { user_id: randomUUID() } },
    { actor: { kind: 'system', id: 'test' }, correlationId: null },
  );
  await appendUnchecked(s.platform.store, sessionStream(randomUUID()), [bad], { expected: 'no_stream' });
  let text = '';
  await until(
    'the sessions projection to fail on it',
    async () => {
      text = (await http(`${s.orch}/metrics`)).text;
      return (sample(text, 'orchard_projection_errors_total', { projection: 'sessions' }) ?? 0) > 0;
    },
    10_000,
    100,
  );
  assert.is(sample(text, 'orchard_projection_lag_events', { projection: 'sessions' }), 1);
  assert.ok(sample(text, 'orchard_projection_errors_total', { projection: 'sessions' })! >= 1);
  assert.ok(sample(text, 'orchard_projection_last_error_timestamp_seconds', { projection: 'sessions' })! > 0);
  assert.ok(
    text.includes(
      'orchard_projection_last_error_info{projection="sessions",error="null value in column \\"session_hash\\"',
    ),
    'the last error is named',
  );
  assert.is(sample(text, 'orchard_projection_lag_events', { projection: 'users' }), 0);
});

test('every reactor beside the projections: checkpoint, lag, active here, and its last error', async ({ s }) => {
  const reactors = ['scheduled_message_poster', 'web_push_sender'];
  const background = backgroundOf(s.platform); // registers the chat reactors with the platform's engine
  background.start();
  try {
    const scrape = async () => (await http(`${s.orch}/metrics`)).text;
    const caughtUp = (text: string) =>
      reactors.every(
        (name) =>
          sample(text, 'orchard_reactor_active', { reactor: name }) === 1 &&
          sample(text, 'orchard_reactor_lag_events', { reactor: name }) === 0,
      );
    let text = await until(
      'the reactors active and caught up',
      async () => {
        const t = await scrape();
        return caughtUp(t) && t;
      },
      20_000,
      100,
    );
    for (const name of reactors) {
      assert.is(sample(text, 'orchard_reactor_active', { reactor: name }), 1, name);
      assert.is(sample(text, 'orchard_reactor_lag_events', { reactor: name }), 0, name);
      assert.is(sample(text, 'orchard_reactor_errors_total', { reactor: name }), 0, name);
      assert.is(
        sample(text, 'orchard_projection_active', { projection: name }),
        undefined,
        `${name} is not listed as a projection`,
      );
    }
    // The push sender starts at the log's head: its checkpoint is written at once.
    assert.ok(
      sample(text, 'orchard_reactor_checkpoint_position', { reactor: 'web_push_sender', part: 'prepare' })! > 0,
    );

    // A delivery the poster cannot act on (no file list): it fails, stays behind, and says why.
    const bad = toAppend(
      { type: 'ScheduledMessageDelivered', data: { scheduled_message_id: randomUUID() } },
      { actor: { kind: 'system', id: 'test' }, correlationId: null },
    );
    await appendUnchecked(s.platform.store, scheduledStream(randomUUID()), [bad], { expected: 'no_stream' });
    text = await until(
      "the poster's error counted",
      async () => {
        const t = await scrape();
        return (sample(t, 'orchard_reactor_errors_total', { reactor: 'scheduled_message_poster' }) ?? 0) > 0 && t;
      },
      20_000,
      100,
    );
    assert.ok(sample(text, 'orchard_reactor_errors_total', { reactor: 'scheduled_message_poster' })! >= 1);
    assert.is(sample(text, 'orchard_reactor_lag_events', { reactor: 'scheduled_message_poster' }), 1);
    assert.ok(
      sample(text, 'orchard_reactor_last_error_timestamp_seconds', { reactor: 'scheduled_message_poster' })! > 0,
    );
    assert.ok(
      text.includes('orchard_reactor_last_error_info{reactor="scheduled_message_poster",error="'),
      'the last error is named',
    );
  } finally {
    await background.stop();
  }
});

test("the processors every instance runs (the write gate, the bot sockets' supervisor) are listed as reactors, active here, at their position in this process", async ({
  s,
}) => {
  const bots = chatsvcBots(s.platform); // registers the supervisor's processor (serve does, with the orchestration service)
  await bots.start();
  try {
    let text = '';
    const listed = (name: string) =>
      sample(text, 'orchard_reactor_active', { reactor: name }) === 1 &&
      sample(text, 'orchard_reactor_lag_events', { reactor: name }) === 0;
    await until(
      'the write gate and the supervisor active and caught up',
      async () => {
        text = (await http(`${s.orch}/metrics`)).text;
        return listed('write_gate') && listed('chatsvc_bot_supervisor');
      },
      20_000,
      100,
    );
    for (const name of ['write_gate', 'chatsvc_bot_supervisor']) {
      assert.is(sample(text, 'orchard_reactor_errors_total', { reactor: name }), 0, name);
      assert.ok(
        sample(text, 'orchard_reactor_checkpoint_position', { reactor: name, part: 'prepare' }) !== undefined,
        name,
      );
      assert.is(
        sample(text, 'orchard_projection_active', { projection: name }),
        undefined,
        `${name} is not listed as a projection`,
      );
    }
    // The supervisor's position is this process's: the head when it started, at least the bootstrap's events.
    assert.ok(
      sample(text, 'orchard_reactor_checkpoint_position', { reactor: 'chatsvc_bot_supervisor', part: 'prepare' })! > 0,
    );
  } finally {
    await bots.stop();
  }
});

test('ORCH_METRICS_TOKEN: Bearer required, 401 otherwise', async ({ s }) => {
  await s.restart({ ORCH_METRICS_TOKEN: TOKEN });
  const none = await http(`${s.orch}/metrics`);
  assert.is(none.status, 401);
  assert.is(none.body.error, 'unauthorized');
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  for (const wrong of ['Bearer nope', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, `Basic ${TOKEN}`]) {
    assert.is((await http(`${s.orch}/metrics`, { headers: { authorization: wrong } })).status, 401, wrong);
  }
  // An API key is no substitute for the token.
  assert.is((await http(`${s.orch}/metrics`, { headers: { 'X-API-Key': ADMIN_KEY } })).status, 401);
  const ok = await http(`${s.orch}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.is(ok.status, 200);
  assert.match(ok.text, /orchard_projection_lag_events/);
});

test.run();
