// Tamper evidence on the PostgreSQL log: a superuser edits, deletes and reorders rows of `events`
// (triggers off), and `orchard audit verify` names the exact position each time; an attacker
// who recomputes the chain without the signing key fails at the checkpoint. Exports verify
// offline, whole, from a position and filtered by stream prefix, and a tampered export fails
// where it was changed. Checkpoints come every 1,000 events or after a minute.
// (Named eventstore.*: it asserts what is visible in the log, so it runs alone, like the log's suites.)

import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { chainHash, type SigningKey } from '../../crypto/audit.ts';
import { CHECKPOINT_EVERY_EVENTS, Chainer, entryJsonOf } from '../../infra/audit/chainer.ts';
import { ChainStore } from '../../infra/audit/chain-store.ts';
import { auditItems } from '../../infra/audit/export.ts';
import { proveEvent } from '../../infra/audit/proof.ts';
import { loadAuditSigningKey } from '../../infra/audit/signing-key.ts';
import { ChainVerifier } from '../../infra/audit/verify.ts';
import { ShiftedClock } from '../../infra/clock.ts';
import type { RecordedEvent } from '../../infra/eventstore/port.ts';
import { formatPosition } from '../../infra/eventstore/position.ts';
import { PostgresEventStore } from '../../infra/eventstore/postgres.ts';
import { createLogger } from '../../infra/logging.ts';
import { orchard } from '../support/cli.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { event } from './eventstore.contract.ts';

interface Ctx {
  db: TestDatabase;
  dir: string;
  env: Record<string, string>;
  store: PostgresEventStore;
  chain: ChainStore;
  chainer: Chainer;
  clock: ShiftedClock;
  key: SigningKey;
  events: RecordedEvent[];
}

const test = suite<Ctx>('audit chain: tamper evidence, export and verify');

test.before(async (ctx) => {
  ctx.db = await freshDatabase('audit_chain');
  ctx.dir = await mkdtemp(path.join(tmpdir(), 'orchard-audit-'));
  ctx.env = { DATABASE_URL: ctx.db.url, DATA_DIR: ctx.dir, ORCH_SECRET_KEY: 'a1'.repeat(32), LOG_LEVEL: 'error' };
  ctx.key = await loadAuditSigningKey({
    auditSigningKeyFile: path.join(ctx.dir, 'audit-signing.key'),
    auditSigningKeyConfigured: false,
  });
  ctx.store = new PostgresEventStore(ctx.db.pool, ctx.db.url);
  ctx.chain = new ChainStore(ctx.db.pool);
  ctx.clock = new ShiftedClock();
  ctx.chainer = new Chainer(
    ctx.store,
    ctx.chain,
    ctx.db.pool,
    ctx.key,
    ctx.clock,
    createLogger({ level: 'error', sink: () => {} }),
  );
  for (let i = 0; i < 5; i++) {
    const stream = `${i % 2 ? 'alpha' : 'beta'}-${randomUUID()}`;
    await ctx.store.append(stream, [event('Made', { i, title: `thing ${i}` }), event('Changed', { i, step: 1 })], {
      expected: 'no_stream',
    });
    await ctx.store.append(stream, [event('Changed', { i, step: 2, note: 'ü €' })], { expected: 1n });
  }
  ctx.events = await ctx.store.readAll({ limit: 1000 });
  assert.is(await ctx.chainer.catchUp(), 15);
});

test.after(async ({ db, dir, store }) => {
  await store.close();
  await db.drop();
  await rm(dir, { recursive: true, force: true });
});

/** Run statements as a superuser with the log's triggers off (session_replication_role = replica). */
async function asSuperuser(db: TestDatabase, ...statements: [string, unknown[]?][]): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query('SET session_replication_role = replica');
    for (const [sql, params] of statements) await client.query(sql, params);
  } finally {
    await client.end();
  }
}

const where = (e: RecordedEvent) =>
  [
    `transaction_id = $1::text::xid8 AND position = $2`,
    [e.position.commit.toString(), e.position.prepare.toString()],
  ] as const;

async function liveVerify(ctx: Ctx): Promise<{ ok: boolean; position?: string | null }> {
  const verifier = new ChainVerifier(ctx.key.publicKeyHex);
  for await (const item of auditItems(ctx.store, ctx.chain, { publicKey: null, now: new Date() }))
    if (!verifier.push(item)) break;
  const result = verifier.result();
  return result.ok ? { ok: true } : { ok: false, position: result.position };
}

test('the intact log verifies: OK with the event and checkpoint counts; public-key prints the signing key', async (ctx) => {
  const verify = await orchard(ctx.env, 'audit', 'verify');
  assert.is(verify.code, 0, verify.stderr);
  assert.is(verify.stdout.trim(), 'OK 15 events, 1 checkpoints');
  const key = await orchard(ctx.env, 'audit', 'public-key');
  assert.is(key.stdout.trim(), ctx.key.publicKeyHex);
});

test('one event proved on its own: its hash follows the chain to a signed checkpoint; an edit breaks the proof', async (ctx) => {
  const target = ctx.events[6]!;
  const proof = await proveEvent(ctx.store, ctx.chain, target.position, ctx.key.publicKeyHex);
  assert.equal(proof, {
    ok: true,
    position: formatPosition(target.position),
    seq: '7',
    hash: proof.ok ? proof.hash : '',
    checkpoint: {
      position: formatPosition(ctx.events[14]!.position),
      at: (await ctx.chain.lastCheckpoint())!.at.toISOString(),
    },
  });
  const [cond, params] = where(ctx.events[9]!);
  await asSuperuser(ctx.db, [`UPDATE events SET type = 'Forged' WHERE ${cond}`, [...params]]);
  const broken = await proveEvent(ctx.store, ctx.chain, target.position, ctx.key.publicKeyHex);
  assert.equal(broken, {
    ok: false,
    position: formatPosition(target.position),
    reason: `the chain breaks at ${formatPosition(ctx.events[9]!.position)}`,
  });
  assert.equal((await proveEvent(ctx.store, ctx.chain, ctx.events[9]!.position, ctx.key.publicKeyHex)).ok, false);
  await asSuperuser(ctx.db, [`UPDATE events SET type = $3 WHERE ${cond}`, [...params, ctx.events[9]!.type]]);
  assert.is((await proveEvent(ctx.store, ctx.chain, ctx.events[9]!.position, ctx.key.publicKeyHex)).ok, true);
  const wrongKey = await proveEvent(ctx.store, ctx.chain, target.position, 'ab'.repeat(32));
  assert.is(wrongKey.ok, false);
  assert.is((await proveEvent(ctx.store, ctx.chain, { commit: 1n, prepare: 1n }, ctx.key.publicKeyHex)).ok, false);
});

test('an edited event: verify names its position (exit 1); restored, the log verifies again', async (ctx) => {
  const target = ctx.events[6]!;
  const [cond, params] = where(target);
  await asSuperuser(ctx.db, [`UPDATE events SET data = jsonb_set(data, '{step}', '99') WHERE ${cond}`, [...params]]);
  const verify = await orchard(ctx.env, 'audit', 'verify');
  assert.is(verify.code, 1);
  assert.is(
    verify.stdout.trim(),
    `FAILED at ${formatPosition(target.position)}: the event does not match its chain hash`,
  );
  await asSuperuser(ctx.db, [
    `UPDATE events SET data = $3::jsonb WHERE ${cond}`,
    [...params, JSON.stringify(target.data)],
  ]);
  assert.equal(await liveVerify(ctx), { ok: true });
});

test('a deleted event: verify names its position; an edited created_at or metadata too', async (ctx) => {
  const target = ctx.events[9]!;
  const [cond, params] = where(target);
  const {
    rows: [saved],
  } = await ctx.db.pool.query(
    `SELECT position, transaction_id::text AS txid, stream_id, revision, event_id, type, data, metadata, created_at FROM events WHERE ${cond}`,
    [...params],
  );
  await asSuperuser(ctx.db, [`DELETE FROM events WHERE ${cond}`, [...params]]);
  const verify = await orchard(ctx.env, 'audit', 'verify');
  assert.is(verify.code, 1);
  assert.is(
    verify.stdout.trim(),
    `FAILED at ${formatPosition(target.position)}: the chain has an entry here but the log holds no event`,
  );
  await asSuperuser(ctx.db, [
    `INSERT INTO events (position, transaction_id, stream_id, revision, event_id, type, data, metadata, created_at) OVERRIDING SYSTEM VALUE
     VALUES ($1, $2::text::xid8, $3, $4, $5, $6, $7, $8, $9)`,
    [
      saved.position,
      saved.txid,
      saved.stream_id,
      saved.revision,
      saved.event_id,
      saved.type,
      saved.data,
      saved.metadata,
      saved.created_at,
    ],
  ]);
  assert.equal(await liveVerify(ctx), { ok: true });

  for (const change of [
    `created_at = created_at + interval '1 second'`,
    `metadata = jsonb_set(metadata, '{actor,id}', '"someone"')`,
    `revision = revision + 100`,
  ]) {
    await asSuperuser(ctx.db, [`UPDATE events SET ${change} WHERE ${cond}`, [...params]]);
    assert.equal(await liveVerify(ctx), { ok: false, position: formatPosition(target.position) }, change);
    await asSuperuser(
      ctx.db,
      [`DELETE FROM events WHERE ${cond}`, [...params]],
      [
        `INSERT INTO events (position, transaction_id, stream_id, revision, event_id, type, data, metadata, created_at) OVERRIDING SYSTEM VALUE
       VALUES ($1, $2::text::xid8, $3, $4, $5, $6, $7, $8, $9)`,
        [
          saved.position,
          saved.txid,
          saved.stream_id,
          saved.revision,
          saved.event_id,
          saved.type,
          saved.data,
          saved.metadata,
          saved.created_at,
        ],
      ],
    );
  }
  assert.equal(await liveVerify(ctx), { ok: true });
});

test('reordered events (two rows swap places): verify names the first position out of place', async (ctx) => {
  const [a, b] = [ctx.events[3]!, ctx.events[11]!];
  // Each row takes the other's event; a row's place in the log (transaction id, position) stays.
  const COLUMNS = 'stream_id, revision, event_id, type, data, metadata, created_at';
  const put = (at: RecordedEvent, e: RecordedEvent, stream = e.stream): [string, unknown[]] => [
    `UPDATE events SET (${COLUMNS}) = ($3, $4, $5, $6, $7, $8, $9) WHERE ${where(at)[0]}`,
    [
      ...where(at)[1],
      stream,
      e.revision.toString(),
      e.id,
      e.type,
      JSON.stringify(e.data),
      JSON.stringify(e.metadata),
      e.created_at,
    ],
  ];
  await asSuperuser(ctx.db, put(a, b, `${b.stream}#moving`), put(b, a), put(a, b));
  const verify = await orchard(ctx.env, 'audit', 'verify');
  assert.is(verify.code, 1);
  assert.is(verify.stdout.trim(), `FAILED at ${formatPosition(a.position)}: the event does not match its chain hash`);
  await asSuperuser(ctx.db, put(a, a, `${a.stream}#moving`), put(b, b), put(a, a));
  assert.equal(await liveVerify(ctx), { ok: true });
});

test('a chain recomputed after an edit, without the signing key, fails at the checkpoint', async (ctx) => {
  const target = ctx.events[4]!;
  const [cond, params] = where(target);
  await asSuperuser(ctx.db, [`UPDATE events SET data = jsonb_set(data, '{step}', '7') WHERE ${cond}`, [...params]]);
  // The attacker rewrites every chain entry from the edited event on, consistently.
  const edited = await ctx.store.readAll({ limit: 1000 });
  const links = await ctx.chain.links(0n, 1000);
  let previous = links[3]!.hash;
  const rewrites: [string, unknown[]][] = [];
  for (let i = 4; i < edited.length; i++) {
    previous = chainHash(previous, entryJsonOf(edited[i]!));
    rewrites.push([
      `UPDATE event_chain SET hash = decode($1, 'hex') WHERE seq = $2`,
      [previous, links[i]!.seq.toString()],
    ]);
  }
  await asSuperuser(ctx.db, ...rewrites);
  const checkpoint = (await ctx.chain.lastCheckpoint())!;
  const verify = await orchard(ctx.env, 'audit', 'verify');
  assert.is(verify.code, 1);
  assert.is(
    verify.stdout.trim(),
    `FAILED at ${formatPosition(checkpoint.position)}: the checkpoint does not match the chain at its position`,
  );
  // Put the event and the chain back.
  await asSuperuser(
    ctx.db,
    [`UPDATE events SET data = $3::jsonb WHERE ${cond}`, [...params, JSON.stringify(target.data)]],
    ...links.map((l): [string, unknown[]] => [
      `UPDATE event_chain SET hash = decode($1, 'hex') WHERE seq = $2`,
      [l.hash, l.seq.toString()],
    ]),
  );
  assert.equal(await liveVerify(ctx), { ok: true });
});

test('export: the whole log verifies offline; a wrong key, an edited, removed or moved line fail where they are', async (ctx) => {
  const file = path.join(ctx.dir, 'export.jsonl');
  const exported = await orchard(ctx.env, 'audit', 'export', '--out', file);
  assert.is(exported.code, 0, exported.stderr);
  const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
  assert.is(lines.length, 1 + 15 + 1); // header, events, one checkpoint
  assert.is(JSON.parse(lines[0]!).kind, 'header');

  // Offline: no database in the environment at all.
  const offline = { DATA_DIR: ctx.dir, DATABASE_URL: '' };
  const ok = await orchard(offline, 'audit', 'verify', file, '--public-key', ctx.key.publicKeyHex);
  assert.is(ok.code, 0, ok.stderr);
  assert.is(ok.stdout.trim(), 'OK 15 events, 1 checkpoints');

  const wrongKey = await orchard(offline, 'audit', 'verify', file, '--public-key', 'ab'.repeat(32));
  assert.is(wrongKey.code, 1);
  assert.match(
    wrongKey.stdout,
    `FAILED at ${formatPosition(ctx.events[14]!.position)}: the checkpoint's signature is not valid`,
  );

  const variants: [string, string[], string][] = [
    [
      'edited',
      lines.map((l, i) => (i === 5 ? l.replace('"step":1', '"step":5') : l)),
      formatPosition(ctx.events[4]!.position),
    ],
    ['removed', lines.filter((_, i) => i !== 8), formatPosition(ctx.events[8]!.position)],
    ['moved', [lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)], formatPosition(ctx.events[1]!.position)],
  ];
  for (const [name, changed, position] of variants) {
    const tampered = path.join(ctx.dir, `${name}.jsonl`);
    await writeFile(tampered, changed.join('\n') + '\n');
    const result = await orchard(offline, 'audit', 'verify', tampered, '--public-key', ctx.key.publicKeyHex);
    assert.is(result.code, 1, name);
    assert.match(result.stdout, `FAILED at ${position}:`, name);
  }
});

test('export --stream-prefix keeps other events as their hashes; --from starts after a position; both verify', async (ctx) => {
  const file = path.join(ctx.dir, 'alpha.jsonl');
  assert.is((await orchard(ctx.env, 'audit', 'export', '--out', file, '--stream-prefix', 'alpha-')).code, 0);
  const lines = (await readFile(file, 'utf8'))
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  const alpha = lines.filter((l) => l.kind === 'event');
  assert.is(alpha.length, 6);
  assert.ok(alpha.every((l) => l.entry.stream.startsWith('alpha-')));
  assert.is(lines.filter((l) => l.kind === 'link').length, 9);
  const ok = await orchard({ DATABASE_URL: '' }, 'audit', 'verify', file, '--public-key', ctx.key.publicKeyHex);
  assert.is(ok.stdout.trim(), 'OK 6 events, 1 checkpoints');

  const from = path.join(ctx.dir, 'from.jsonl');
  assert.is(
    (await orchard(ctx.env, 'audit', 'export', '--out', from, '--from', formatPosition(ctx.events[9]!.position))).code,
    0,
  );
  const tail = await orchard({ DATABASE_URL: '' }, 'audit', 'verify', from, '--public-key', ctx.key.publicKeyHex);
  assert.is(tail.stdout.trim(), 'OK 5 events, 1 checkpoints');

  const usage = await orchard(ctx.env, 'audit', 'verify', file);
  assert.is(usage.code, 2);
  assert.is((await orchard(ctx.env, 'audit', 'export', '--out', from, '--from', 'yesterday')).code, 2);
});

test('replay --until a position or an instant stops there', async (ctx) => {
  const upTo = await orchard(ctx.env, 'replay', '--until', formatPosition(ctx.events[6]!.position));
  assert.is(upTo.code, 0, upTo.stderr);
  assert.equal(
    upTo.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).id),
    ctx.events.slice(0, 7).map((e) => e.id),
  );
  const before = await orchard(ctx.env, 'replay', '--until', '2000-01-01T00:00:00Z');
  assert.is(before.stdout, '');
  const now = await orchard(ctx.env, 'replay', '--until', new Date(Date.now() + 60_000).toISOString());
  assert.is(now.stdout.trimEnd().split('\n').length, 15);
  assert.is((await orchard(ctx.env, 'replay', '--until', 'soon')).code, 2);
});

test('checkpoints: one every 1,000 events, and the head after a minute without one', async (ctx) => {
  const before = (await ctx.chain.lastCheckpoint())!;
  const stream = `bulk-${randomUUID()}`;
  let expected: bigint | 'no_stream' = 'no_stream';
  for (let i = 0; i < 25; i++) {
    expected = (
      await ctx.store.append(
        stream,
        Array.from({ length: 100 }, (_, n) => event('Bulk', { n: i * 100 + n })),
        { expected },
      )
    ).nextExpectedRevision;
  }
  await ctx.chainer.catchUp();
  const signed = await ctx.chain.checkpoints(before.seq, 100);
  assert.equal(
    signed.map((c) => c.seq),
    [before.seq + BigInt(CHECKPOINT_EVERY_EVENTS), before.seq + 2n * BigInt(CHECKPOINT_EVERY_EVENTS)],
  );
  await ctx.chainer.catchUp();
  assert.is((await ctx.chain.checkpoints(before.seq, 100)).length, 2); // nothing new, under a minute
  ctx.clock.advance(61_000);
  await ctx.chainer.catchUp();
  const after = await ctx.chain.checkpoints(before.seq, 100);
  assert.is(after.length, 3);
  assert.is(after[2]!.seq, (await ctx.chain.head())!.seq);
  assert.equal(await liveVerify(ctx), { ok: true });
});

test('the chain tables are append-only too', async ({ db }) => {
  for (const sql of [
    'UPDATE event_chain SET hash = hash',
    'DELETE FROM audit_checkpoints',
    'TRUNCATE event_chain, audit_checkpoints',
  ]) {
    try {
      await db.pool.query(sql);
      assert.unreachable(sql);
    } catch (error) {
      assert.match((error as Error).message, /append-only/);
    }
  }
});

test.run();
