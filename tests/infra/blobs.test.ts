// Content-addressed blobs (infra/blobs.ts) against a real PostgreSQL: stored once under their
// key, read back from memory when this process stored them lately, else from the database.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { blobKey, forgetRecentBlobs, putBlob, putBlobs, readBlobs, RecentTexts } from '../../infra/blobs.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';

const test = suite<{ db: TestDatabase }>('blobs');

test.before.each(async (ctx) => {
  ctx.db = await freshDatabase('blobs');
  forgetRecentBlobs();
});
test.after.each(async ({ db }) => {
  await db.drop();
});

const texts = ['plain ascii', 'ünïcödé and emoji 🧭', 'x'.repeat(100_000), 'plain ascii'];

test('putBlobs stores each text once under the SHA-256 of its UTF-8 bytes; storing again is a no-op', async ({
  db,
}) => {
  await putBlobs(
    db.pool,
    texts.map((text) => ({ key: blobKey(text), text })),
  );
  await putBlobs(
    db.pool,
    texts.map((text) => ({ key: blobKey(text), text })),
  );
  assert.is(await putBlob(db.pool, texts[1]!), blobKey(texts[1]!));
  const { rows } = await db.pool.query<{ sha256: string; ok: boolean; chars: number }>(
    `SELECT sha256, sha256 = encode(sha256(convert_to(content, 'UTF8')), 'hex') AS ok, chars FROM blobs ORDER BY chars`,
  );
  assert.is(rows.length, 3);
  assert.ok(rows.every((r) => r.ok));
  assert.equal(
    rows.map((r) => r.chars),
    [11, 20, 100_000],
  );
});

test('readBlobs: from memory after this process stored them, from the database otherwise, a missing one an error', async ({
  db,
}) => {
  await putBlobs(
    db.pool,
    texts.map((text) => ({ key: blobKey(text), text })),
  );
  forgetRecentBlobs();
  const fromDb = await readBlobs(db.pool, texts.map(blobKey));
  assert.equal([...fromDb.values()].sort(), [...new Set(texts)].sort());
  // Kept in memory: readable even with the row gone (blobs are never deleted; the test removes one).
  await putBlob(db.pool, 'kept in memory');
  await db.pool.query('DELETE FROM blobs WHERE sha256 = $1', [blobKey('kept in memory')]);
  assert.is((await readBlobs(db.pool, [blobKey('kept in memory')])).get(blobKey('kept in memory')), 'kept in memory');
  forgetRecentBlobs();
  try {
    await readBlobs(db.pool, [blobKey('kept in memory'), blobKey(texts[0]!)]);
    assert.unreachable('a missing blob must be an error');
  } catch (error) {
    assert.match((error as Error).message, /missing blob\(s\): [0-9a-f]{64}/);
  }
});

test('a statement that fails stores nothing and keeps nothing in memory', async ({ db }) => {
  await db.pool.query(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    IF NEW.content LIKE '%refused%' THEN RAISE EXCEPTION 'refused by the test'; END IF; RETURN NEW; END $$;
    CREATE TRIGGER refuse BEFORE INSERT ON blobs FOR EACH ROW EXECUTE FUNCTION refuse()`);
  try {
    await putBlobs(db.pool, [
      { key: blobKey('fine'), text: 'fine' },
      { key: blobKey('refused'), text: 'refused' },
    ]);
    assert.unreachable('the statement must fail');
  } catch (error) {
    assert.match((error as Error).message, /refused by the test/);
  }
  assert.is((await db.pool.query('SELECT 1 FROM blobs')).rowCount, 0);
  try {
    await readBlobs(db.pool, [blobKey('fine')]);
    assert.unreachable('nothing was stored');
  } catch (error) {
    assert.match((error as Error).message, /missing blob/);
  }
});

test('RecentTexts keeps the newest texts within its limit, and no text over a quarter of it', () => {
  const recent = new RecentTexts(100);
  recent.add('a', 'a'.repeat(20));
  recent.add('b', 'b'.repeat(25));
  recent.add('big', 'x'.repeat(26));
  assert.is(recent.get('big'), undefined);
  recent.add('c', 'c'.repeat(25));
  recent.add('d', 'd'.repeat(25));
  assert.ok(recent.get('a'));
  recent.add('e', 'e'.repeat(10)); // 105 characters: the oldest goes
  assert.is(recent.get('a'), undefined);
  assert.equal(
    ['b', 'c', 'd', 'e'].map((k) => recent.get(k)?.length),
    [25, 25, 25, 10],
  );
  recent.clear();
  assert.is(recent.get('b'), undefined);
});

test.run();
