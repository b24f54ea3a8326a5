// Positions are ordered pairs of numbers, never text: the feeds that sort and page by position
// (the registry's `GET /api/v1/events`, the orchestration audit log, a chat channel's messages)
// stay newest first and page without gaps or repeats when positions grow a digit. Run on both logs: the PostgreSQL one
// (positions are transaction ids and a sequence: the suite burns transaction ids and advances the
// sequence past a power of ten) and the EventStoreDB test double (positions are byte offsets:
// the suite appends a padding event that carries the log past a power of ten).

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../infra/db/embedded.ts';
import { comparePositions, parsePosition } from '../../infra/eventstore/position.ts';
import { startEsdbTestServer, type EsdbTestServer } from '../doubles/esdb-test-server.ts';
import type { ChatAccount } from '../support/chat.ts';
import { interactive, REGISTRY_ENV, type Interactive } from '../support/registry.ts';
import { http, startTestApps, type TestServices } from '../support/services.ts';
import { Spaces } from '../support/spaces.ts';
import { messageStream } from '../../domain/chat/streams.ts';

const ADMIN_KEY = `admin-${randomUUID()}`;
const digits = (position: string) => position.split('/')[0]!.length;
const nextPowerOfTen = (n: bigint) => 10n ** BigInt(n.toString().length);

/**
 * Move the log so that the next event's position has more digits than the last one's. On
 * PostgreSQL the commit part is the writer's transaction id: burn ids (each subtransaction that
 * inserts takes one) up to the next power of ten, and move the position sequence past its next
 * power of ten too. On the double positions are byte offsets: append padding as large
 * as the distance to the next power of ten.
 */
async function crossPowerOfTen(s: TestServices, store: 'postgres' | 'esdb'): Promise<void> {
  const head = (await s.platform.store.headPosition())!;
  if (store === 'postgres') {
    const client = await s.db.pool.connect();
    try {
      const { rows } = await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid');
      const burn = Number(nextPowerOfTen(BigInt(rows[0]!.xid)) - BigInt(rows[0]!.xid)) + 10;
      await client.query('CREATE TEMP TABLE IF NOT EXISTS xid_burn (n int)');
      await client.query(
        `DO $$ BEGIN FOR i IN 1..${burn} LOOP BEGIN INSERT INTO xid_burn VALUES (i); EXCEPTION WHEN others THEN NULL; END; END LOOP; END $$`,
      );
    } finally {
      client.release();
    }
    await s.db.pool.query(`SELECT setval(pg_get_serial_sequence('events', 'position'), $1::bigint)`, [
      nextPowerOfTen(head.prepare).toString(),
    ]);
  } else {
    // In events of at most 500 kB (the server's append limit is 1 MiB).
    for (let remaining = Number(nextPowerOfTen(head.commit) - head.commit); remaining > 0;) {
      const size = Math.min(500_000, remaining);
      await s.platform.store.append(
        `test_padding-${randomUUID()}`,
        [
          {
            id: randomUUID(),
            type: 'TestPaddingWritten',
            data: { pad: 'x'.repeat(size) },
            metadata: { actor: { kind: 'system', id: 'test' }, correlation_id: null, causation_id: null, schema: 1 },
          },
        ],
        { expected: 'no_stream' },
      );
      remaining -= size;
    }
  }
}

/** An embedded PostgreSQL server for this suite's databases alone (until `stop`). */
async function ownServer(): Promise<{ stop(): Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'orchard-positions-'));
  const server: EmbeddedServer = await startEmbeddedPostgres(dir, { persistent: false, durable: false });
  const shared = process.env.ORCHARD_TEST_SERVER_URL;
  process.env.ORCHARD_TEST_SERVER_URL = server.url;
  return {
    async stop() {
      if (shared === undefined) delete process.env.ORCHARD_TEST_SERVER_URL;
      else process.env.ORCHARD_TEST_SERVER_URL = shared;
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Newest first, numerically, with no repeats. */
function assertNewestFirst(positions: string[]): void {
  for (let i = 1; i < positions.length; i++) {
    assert.ok(
      comparePositions(parsePosition(positions[i - 1]!), parsePosition(positions[i]!)) > 0,
      `${positions[i - 1]} listed before ${positions[i]}`,
    );
  }
}

function positionsSuite(store: 'postgres' | 'esdb') {
  const test = suite<{
    s: TestServices;
    admin: Interactive;
    double?: EsdbTestServer;
    own?: { stop(): Promise<void> };
    sp: Spaces;
    ann: ChatAccount;
    chid: string;
    posted: string[];
  }>(`log positions of different lengths (${store})`);
  test.before(async (ctx) => {
    // The PostgreSQL log runs on a server of its own: a fresh cluster's transaction ids are small,
    // so crossing the next power of ten burns a few thousand of them, and the burning transaction
    // holds back no other suite's readers of the shared test server.
    if (store === 'postgres') ctx.own = await ownServer();
    const env: Record<string, string> = {
      ...REGISTRY_ENV,
      ADMIN_API_KEY: ADMIN_KEY,
      CHATSVC_AUTH_RATE_PER_MIN: '100000',
      CHATSVC_API_RATE_PER_SEC: '100000',
    };
    if (store === 'esdb') {
      ctx.double = await startEsdbTestServer();
      env.EVENTSTORE_URL = ctx.double.url;
    }
    const s = (ctx.s = await startTestApps(`positions_${store}`, env));
    const admin = (ctx.admin = await interactive(s, 'ada', 'admin'));
    // Registry changes and failed logins (audit entries) on both sides of a power of ten.
    const create = async (slug: string) =>
      assert.is(
        (await http(`${s.registry}/api/v1/customers`, { headers: admin.headers, json: { slug, name: slug } })).status,
        201,
      );
    const failLogin = async (n: number) => {
      const r = await http(`${s.orch}/auth/login`, {
        json: { email: `nobody-${n}@example.test`, password: 'wrong password' },
        peer: `10.0.0.${n}`,
      });
      assert.is(r.status, 401, r.text);
    };
    // And chat messages in one channel (their order is their MessagePosted's position).
    const sp = (ctx.sp = new Spaces(s));
    const owner = await sp.register('own');
    const ann = (ctx.ann = await sp.register('ann'));
    const cid = await sp.community(owner);
    await sp.join(cid, owner, [ann]);
    const gid = await sp.group(owner, cid);
    await sp.ok(ann, 'POST', `/api/groups/${gid}/join`);
    const chid = (ctx.chid = await sp.channel(owner, gid, [ann]));
    ctx.posted = [];
    const post = async (n: number) => ctx.posted.push((await sp.post(ann, chid, `message ${n}`)).id);
    for (const slug of ['p-one', 'p-two', 'p-three']) await create(slug);
    for (const n of [1, 2, 3]) await failLogin(n);
    for (const n of [1, 2, 3]) await post(n);
    await crossPowerOfTen(s, store);
    for (const slug of ['p-four', 'p-five']) await create(slug);
    for (const n of [4, 5, 6]) await failLogin(n);
    for (const n of [4, 5, 6]) await post(n);
    assert.is(
      (await http(`${s.registry}/api/v1/customers/p-two`, { method: 'DELETE', headers: admin.headers })).status,
      204,
    );
  });
  test.after(async ({ s, double, own }) => {
    await s?.close();
    await double?.stop();
    await own?.stop();
  });

  test("registry events: newest first and `before` paging across a power of ten; a deleted customer's history starts with its deletion", async ({
    s,
    admin,
  }) => {
    const api = `${s.registry}/api/v1`;

    const all = await http(`${api}/events?limit=200`, { headers: admin.headers });
    assert.is(all.status, 200, all.text);
    const positions = all.body.items.map((e: { position: string }) => e.position) as string[];
    assert.ok(new Set(positions.map(digits)).size > 1, `positions of different lengths: ${positions.join(' ')}`);
    assertNewestFirst(positions);
    assert.is(all.body.items[0].type, 'CustomerDeleted');
    assert.equal(
      all.body.items
        .filter((e: { type: string }) => e.type === 'CustomerCreated')
        .map((e: { customer_slug: string }) => e.customer_slug),
      ['p-five', 'p-four', 'p-three', 'p-two', 'p-one'],
    );

    const paged: string[] = [];
    for (let before: string | null = ''; before !== null;) {
      const page = await http(`${api}/events?limit=2${before ? `&before=${encodeURIComponent(before)}` : ''}`, {
        headers: admin.headers,
      });
      assert.is(page.status, 200, page.text);
      paged.push(...page.body.items.map((e: { position: string }) => e.position));
      before = page.body.next_before;
    }
    assert.equal(paged, positions, '`before` pages through every event once, in order');

    const history = await http(`${api}/events?customer=p-two&limit=1`, { headers: admin.headers });
    assert.equal(
      history.body.items.map((e: { type: string }) => e.type),
      ['CustomerDeleted'],
    );
    const whole = await http(`${api}/events?customer=p-two&limit=10`, { headers: admin.headers });
    assert.equal(
      whole.body.items.map((e: { type: string }) => e.type),
      ['CustomerDeleted', 'CustomerCreated'],
    );
  });

  test('orchestration audit log: newest first and `before` paging across a power of ten', async ({ s }) => {
    const url = (query: string) => `${s.orch}/api/v1/agent-chat/audit?${query}`;
    const all = await http(url('limit=100'), { headers: { 'X-API-Key': ADMIN_KEY } });
    assert.is(all.status, 200, all.text);
    const entries = all.body as { id: string; position: string; event_type: string }[];
    assert.is(entries.filter((e) => e.event_type === 'login_failed').length, 6);
    const positions = entries.map((e) => e.position);
    assert.ok(new Set(positions.map(digits)).size > 1, `positions of different lengths: ${positions.join(' ')}`);
    assertNewestFirst(positions);
    const paged: string[] = [];
    for (let before = ''; ;) {
      const page = (await http(url(`limit=2${before}`), { headers: { 'X-API-Key': ADMIN_KEY } })).body as {
        position: string;
      }[];
      if (page.length === 0) break;
      paged.push(...page.map((e) => e.position));
      before = `&before=${page.at(-1)!.position}`;
    }
    assert.equal(paged, positions);
  });

  test('chat messages: newest first and `before` paging across a power of ten', async ({
    s,
    sp,
    ann,
    chid,
    posted,
  }) => {
    const newest = [...posted].reverse();
    const all = await sp.ok(ann, 'GET', `/api/channels/${chid}/messages?limit=100`);
    assert.equal(
      all.messages.map((m: { id: string }) => m.id),
      newest,
    );
    const positions = await Promise.all(
      newest.map(async (id) => (await s.platform.store.readStream(messageStream(id)))[0]!.position),
    );
    assert.ok(new Set(positions.map((p) => p.commit.toString().length)).size > 1, 'positions of different lengths');
    const paged: string[] = [];
    for (let before = ''; ;) {
      const page = (await sp.ok(ann, 'GET', `/api/channels/${chid}/messages?limit=2${before}`)).messages as {
        id: string;
      }[];
      if (page.length === 0) break;
      paged.push(...page.map((m) => m.id));
      before = `&before=${page.at(-1)!.id}`;
    }
    assert.equal(paged, newest);
  });

  test.run();
}

positionsSuite('postgres');
positionsSuite('esdb');
