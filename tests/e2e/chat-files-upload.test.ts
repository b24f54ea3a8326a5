// What needs a real socket for uploads: a 100 MiB upload is streamed to disk (the process grows
// by less than 64 MiB while it arrives) and its SHA-256 is the client's; a body declared over
// the limit is refused 413 before it is read; a file over the limit without a declared length
// is refused 413 `file_too_large` once it passes the limit; a client that goes away mid-upload
// leaves no temp file and no event.

import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FilesystemBlobStore } from '../../infra/files/store.ts';
import { registerChat, type ChatAccount } from '../support/chat.ts';
import { startTestServices, type TestServices } from '../support/services.ts';
import { streamUpload } from '../support/upload-client.ts';
import path from 'node:path';

const MiB = 1024 * 1024;

const test = suite<{ s: TestServices; user: ChatAccount }>('chat uploads over a real socket');
test.before(async (ctx) => {
  ctx.s = await startTestServices('chat_files_e2e', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
  });
  ctx.user = await registerChat(ctx.s.chat);
});
test.after(async ({ s }) => s?.close());

const events = async (s: TestServices) =>
  (await s.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE type = 'FileUploaded'`)).rows[0].n as number;

test("a 100 MiB upload streams to disk: RSS grows by less than 64 MiB; the stored SHA-256 is the client's", async ({
  s,
  user,
}) => {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  let result;
  try {
    result = await streamUpload(`${s.chat}/api/files/upload`, user.access, 100 * MiB, { hash: true });
  } finally {
    clearInterval(sampler);
  }
  assert.is(result.status, 201, result.text);
  assert.equal([result.body.size, result.body.sha256], [100 * MiB, result.sha256]);
  const growth = (peak - before) / MiB;
  assert.ok(growth < 64, `RSS grew by ${growth.toFixed(1)} MiB`);
});

test('a body declared over 110 MiB is refused 413 before it is read', async ({ s, user }) => {
  const r = await streamUpload(`${s.chat}/api/files/upload`, user.access, 4 * MiB, { declared: 200 * MiB });
  assert.is(r.status, 413);
  assert.match(r.text, /limit/);
});

test('a chunked upload past 100 MiB is refused 413 file_too_large; nothing is left behind', async ({ s, user }) => {
  const before = await events(s);
  const r = await streamUpload(`${s.chat}/api/files/upload`, user.access, 101 * MiB, { declared: null });
  assert.is(r.status, 413);
  assert.is(r.body.code, 'file_too_large');
  assert.is(await events(s), before);
  assert.equal(await new FilesystemBlobStore(path.join(s.env.DATA_DIR!, 'files')).temps(), []);
});

test('a client that goes away mid-upload leaves no temp file and no event', async ({ s, user }) => {
  const before = await events(s);
  const r = await streamUpload(`${s.chat}/api/files/upload`, user.access, 20 * MiB, { abortAfter: 5 * MiB });
  assert.ok(r.aborted);
  const store = new FilesystemBlobStore(path.join(s.env.DATA_DIR!, 'files'));
  for (let i = 0; i < 100 && (await store.temps()).length; i++) await new Promise((done) => setTimeout(done, 20));
  assert.equal(await store.temps(), []);
  assert.is(await events(s), before);
});

test.run();
