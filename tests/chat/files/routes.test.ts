// Files through real HTTP (in-process): upload (multipart, streamed), meta, download with ETag,
// Range and the safety headers, readers and 404s, delete, the limits (file, quota, also racing
// uploads), dedup, an aborted upload leaving nothing, blocked hashes (422 and the audit event;
// stored files quarantined), message posts with file_ids (has_file), the admin file routes,
// the blob sweep, and rebuilt read models equal to the live ones.

import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FILE_EVENT_TYPES, BLOCKED_HASH_EVENT_TYPES } from '../../../domain/chat/files/events.ts';
import { blobReferenced } from '../../../projections/chat/files.ts';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { fileUpload, multipart, png } from '../../support/multipart.ts';
import { http, logText, startTestApps, type TestServices } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';
import { FilesystemBlobStore } from '../../../infra/files/store.ts';

const MiB = 1024 * 1024;
const sha = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');

interface Ctx {
  s: TestServices;
  sp: Spaces;
  admin: ChatAccount;
  owner: ChatAccount;
  ann: ChatAccount;
  bob: ChatAccount;
  out: ChatAccount;
  ch: string;
  ch2: string;
}
const test = suite<Ctx>('chat files');
test.before(async (ctx) => {
  ctx.s = await startTestApps('chat_files', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    CHATSVC_COMMUNITY_CREATION: 'open',
    CHATSVC_MAX_UPLOAD_MB: '1',
    CHATSVC_UPLOAD_QUOTA_MB: '3',
  });
  const sp = (ctx.sp = new Spaces(ctx.s));
  ctx.admin = await sp.register('adm');
  ctx.owner = await sp.register('own');
  ctx.ann = await sp.register('ann');
  ctx.bob = await sp.register('bob');
  ctx.out = await sp.register('out');
  const cid = await sp.community(ctx.owner);
  await sp.join(cid, ctx.owner, [ctx.ann, ctx.bob, ctx.out]);
  const gid = await sp.group(ctx.owner, cid);
  for (const u of [ctx.ann, ctx.bob]) await sp.ok(u, 'POST', `/api/groups/${gid}/join`);
  ctx.ch = await sp.channel(ctx.owner, gid, [ctx.ann, ctx.bob]);
  ctx.ch2 = await sp.channel(ctx.owner, gid, [ctx.ann], 'second');
});
test.after(async ({ s }) => s?.close());

const upload = (
  s: TestServices,
  who: ChatAccount,
  data: string | Uint8Array,
  options: Parameters<typeof fileUpload>[2] = {},
) => http(`${s.chat}/api/files/upload`, fileUpload(who, data, options));
const get = (s: TestServices, who: ChatAccount | null, p: string, headers: Record<string, string> = {}) =>
  http(`${s.chat}${p}`, { headers: { ...(who ? { authorization: `Bearer ${who.access}` } : {}), ...headers } });
const filesDir = (s: TestServices) => path.join(s.env.DATA_DIR!, 'files');
const blobCount = async (s: TestServices) => {
  let n = 0;
  for (const d of await readdir(path.join(filesDir(s), 'blobs')).catch(() => [] as string[]))
    n += (await readdir(path.join(filesDir(s), 'blobs', d))).length;
  return n;
};

test('upload with a channel: 201 meta; members read it, others get 404; the download headers, ETag, Range', async ({
  s,
  ann,
  bob,
  out,
  ch,
}) => {
  const text = 'hello, garden\n'.repeat(10);
  const r = await upload(s, ann, text, { filename: 'notes.txt', fields: { channel_id: ch } });
  assert.is(r.status, 201, r.text);
  assert.equal(Object.keys(r.body).sort(), [
    'channel_id',
    'created_at',
    'id',
    'mime_type',
    'name',
    'sha256',
    'size',
    'uploader_id',
  ]);
  assert.equal(
    [r.body.name, r.body.size, r.body.mime_type, r.body.sha256, r.body.channel_id, r.body.uploader_id],
    ['notes.txt', text.length, 'text/plain', sha(text), ch, ann.id],
  );
  const id = r.body.id;
  assert.equal((await get(s, bob, `/api/files/${id}/meta`)).body, r.body);
  for (const who of [out]) {
    expectError(await get(s, who, `/api/files/${id}/meta`), 404);
    expectError(await get(s, who, `/api/files/${id}`), 404);
  }
  expectError(await get(s, null, `/api/files/${id}`), 401);
  expectError(await get(s, bob, '/api/files/00000000-0000-4000-8000-000000000000'), 404);
  expectError(await get(s, bob, '/api/files/nope/meta'), 404);

  const d = await get(s, bob, `/api/files/${id}`);
  assert.is(d.status, 200);
  assert.is(d.text, text);
  const h = (k: string) => d.headers.get(k);
  assert.equal(
    [
      h('etag'),
      h('x-content-type-options'),
      h('content-security-policy'),
      h('cache-control'),
      h('content-type'),
      h('content-length'),
      h('accept-ranges'),
    ],
    [`"${sha(text)}"`, 'nosniff', 'sandbox', 'private', 'text/plain', String(text.length), 'bytes'],
  );
  assert.match(h('content-disposition')!, /^attachment; filename="notes.txt"/);
  assert.is((await get(s, bob, `/api/files/${id}`, { 'if-none-match': `"${sha(text)}"` })).status, 304);
  const part = await get(s, bob, `/api/files/${id}`, { range: 'bytes=7-12' });
  assert.equal(
    [part.status, part.text, part.headers.get('content-range')],
    [206, text.slice(7, 13), `bytes 7-12/${text.length}`],
  );
  const tail = await get(s, bob, `/api/files/${id}`, { range: 'bytes=-5' });
  assert.equal([tail.status, tail.text], [206, text.slice(-5)]);
  const open = await get(s, bob, `/api/files/${id}`, { range: 'bytes=100-' });
  assert.equal([open.status, open.text], [206, text.slice(100)]);
  const bad = await get(s, bob, `/api/files/${id}`, { range: `bytes=${text.length}-` });
  assert.equal([bad.status, bad.headers.get('content-range')], [416, `bytes */${text.length}`]);
  assert.is(
    (await get(s, bob, `/api/files/${id}`, { range: 'bytes=0-1,4-5' })).status,
    200,
    'several ranges: the whole body',
  );
  assert.is((await get(s, bob, `/api/files/${id}`, { range: 'bytes=0-1', 'if-range': '"other"' })).status, 200);

  // A raster image is inline; the name is kept safe in the header.
  const image = await upload(s, ann, png(1), { filename: 'pic 1.png', fields: { channel_id: ch } });
  assert.is(image.body.mime_type, 'image/png');
  const shown = await get(s, bob, `/api/files/${image.body.id}`);
  assert.match(
    shown.headers.get('content-disposition')!,
    /^inline; filename="pic 1.png"; filename\*=UTF-8''pic%201.png$/,
  );
  // A lying name does not change the type: HTML stays an attachment of type text/plain.
  const html = await upload(s, ann, '<html><script>alert(1)</script></html>', { filename: 'x.png' });
  assert.is(html.body.mime_type, 'text/plain');
  assert.match((await get(s, bob, `/api/files/${html.body.id}`)).headers.get('content-disposition')!, /^attachment/);
});

test('no channel: any signed-in holder of the id reads it; the uploader always does', async ({ s, ann, out }) => {
  const r = await upload(s, ann, new Uint8Array([0, 1, 2, 3, 255]), { filename: 'blob.bin' });
  assert.equal([r.status, r.body.channel_id, r.body.mime_type], [201, null, 'application/octet-stream']);
  assert.is((await get(s, out, `/api/files/${r.body.id}`)).status, 200);
});

test('upload refusals: auth, body form, channel, file size', async ({ s, ann, out, ch }) => {
  const unauth = fileUpload(ann, 'x');
  delete (unauth.headers as Record<string, string>).authorization;
  expectError(await http(`${s.chat}/api/files/upload`, unauth), 401);
  expectError(
    await http(`${s.chat}/api/files/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ann.access}` },
      json: { file: 'x' },
    }),
    400,
  );
  const noFile = multipart([{ name: 'channel_id', data: ch }]);
  expectError(
    await http(`${s.chat}/api/files/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ann.access}`, 'content-type': noFile.contentType },
      body: noFile.body,
    }),
    400,
  );
  expectError(await upload(s, ann, 'a', { extra: [{ name: 'file', filename: 'b.txt', data: 'b' }] }), 400);
  expectError(await upload(s, ann, 'a', { fields: { channel_id: 'nope' } }), 400);
  expectError(await upload(s, out, 'a', { fields: { channel_id: ch } }), 403);
  expectError(await upload(s, ann, 'a', { fields: { channel_id: '00000000-0000-4000-8000-000000000000' } }), 404);
  const big = await upload(s, ann, new Uint8Array(MiB + 1));
  expectError(big, 413);
  assert.is(big.body.code, 'file_too_large');
  const exact = await upload(s, ann, new Uint8Array(MiB));
  assert.is(exact.status, 201, 'exactly the limit is fine');
  assert.is(
    (
      await http(`${s.chat}/api/files/${exact.body.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${ann.access}` },
      })
    ).status,
    204,
  );
  assert.equal(await new FilesystemBlobStore(filesDir(s)).temps(), [], 'refused uploads leave no temp file');
});

test('an aborted upload leaves nothing: no temp file, no event', async ({ s, ann }) => {
  const before = (await s.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE type = 'FileUploaded'`)).rows[0].n;
  const { body, contentType } = multipart([{ name: 'file', filename: 'cut.bin', data: new Uint8Array(512 * 1024) }]);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= 300 * 1024) return controller.error(new Error('client went away'));
      controller.enqueue(body.subarray(sent, sent + 64 * 1024));
      sent += 64 * 1024;
    },
  });
  const { createApp } = await import('../../../main/apps.ts');
  const app = createApp('chat', s.platform);
  const res = await Promise.resolve(
    app.request('/api/files/upload', {
      method: 'POST',
      headers: { authorization: `Bearer ${ann.access}`, 'content-type': contentType },
      body: stream,
      duplex: 'half',
    } as RequestInit),
  ).catch((e) => e);
  assert.ok(res instanceof Error || res.status >= 400, 'the upload does not succeed');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await new FilesystemBlobStore(filesDir(s)).temps(), []);
  assert.is(
    (await s.db.pool.query(`SELECT count(*)::int AS n FROM events WHERE type = 'FileUploaded'`)).rows[0].n,
    before,
  );
});

test('dedup: the same bytes twice are two files over one blob', async ({ s, ann, bob }) => {
  const data = png(42, 8, 8);
  const blobs = await blobCount(s);
  const a = await upload(s, ann, data, { filename: 'a.png' });
  const b = await upload(s, bob, data, { filename: 'b.png' });
  assert.equal([a.status, b.status], [201, 201]);
  assert.is.not(a.body.id, b.body.id);
  assert.is(a.body.sha256, b.body.sha256);
  assert.is(await blobCount(s), blobs + 1);
  // Deleting one keeps the blob for the other.
  assert.is(
    (
      await http(`${s.chat}/api/files/${a.body.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${ann.access}` },
      })
    ).status,
    204,
  );
  assert.is((await get(s, bob, `/api/files/${b.body.id}`)).status, 200);
});

test('quota: racing uploads cannot both pass; a full quota refuses; deleting frees it', async ({ s, sp }) => {
  const q = await sp.register('quota');
  const fill = [await upload(s, q, new Uint8Array(MiB).fill(1)), await upload(s, q, new Uint8Array(MiB).fill(2))];
  assert.equal(
    fill.map((r) => r.status),
    [201, 201],
  );
  // 1 MiB left: two uploads of 0.75 MiB at once; the uploader's one stream decides.
  const racing = await Promise.all([
    upload(s, q, new Uint8Array(768 * 1024).fill(3)),
    upload(s, q, new Uint8Array(768 * 1024).fill(4)),
  ]);
  assert.equal(racing.map((r) => r.status).sort(), [201, 413]);
  assert.is(racing.find((r) => r.status === 413)!.body.code, 'quota_exceeded');
  const full = await upload(s, q, new Uint8Array(512 * 1024).fill(5));
  expectError(full, 413);
  assert.is(full.body.code, 'quota_exceeded');
  assert.is(
    (
      await http(`${s.chat}/api/files/${fill[0]!.body.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${q.access}` },
      })
    ).status,
    204,
  );
  assert.is((await upload(s, q, new Uint8Array(512 * 1024).fill(5))).status, 201);
});

test('delete: the uploader 204; another reader 403; a non-reader 404; gone afterwards', async ({
  s,
  ann,
  bob,
  out,
  ch,
}) => {
  const r = await upload(s, ann, 'to delete', { fields: { channel_id: ch } });
  const del = (who: ChatAccount) =>
    http(`${s.chat}/api/files/${r.body.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${who.access}` } });
  expectError(await del(bob), 403);
  expectError(await del(out), 404);
  assert.is((await del(ann)).status, 204);
  expectError(await del(ann), 404);
  expectError(await get(s, ann, `/api/files/${r.body.id}/meta`), 404);
});

test("messages carry file_ids: has_file; this channel's files or the poster's own without a channel; not quarantined", async ({
  s,
  sp,
  admin,
  ann,
  bob,
  ch,
  ch2,
}) => {
  const mine = await upload(s, ann, 'attached', { fields: { channel_id: ch } });
  const loose = await upload(s, ann, 'loose file');
  const elsewhere = await upload(s, ann, 'other channel', { fields: { channel_id: ch2 } });
  const m = await sp.post(ann, ch, 'cipher', { file_ids: [mine.body.id, loose.body.id] });
  assert.equal(m.file_ids.sort(), [mine.body.id, loose.body.id].sort());
  const plain = await sp.post(ann, ch, 'no files');
  assert.equal(plain.file_ids, []);
  const found = await sp.ok(bob, 'GET', `/api/channels/${ch}/messages/search?has_file=true`);
  assert.equal(
    found.messages.map((x: { id: string }) => x.id),
    [m.id],
  );
  assert.ok(
    (await sp.ok(bob, 'GET', `/api/channels/${ch}/messages/search?has_file=false`)).messages.some(
      (x: { id: string }) => x.id === plain.id,
    ),
  );
  // Bob may not attach Ann's loose file, nor a file of another channel; nobody attaches a quarantined one.
  expectError(
    await sp.call(bob, 'POST', `/api/channels/${ch}/messages`, { ciphertext: 'x', file_ids: [loose.body.id] }),
    400,
  );
  expectError(
    await sp.call(ann, 'POST', `/api/channels/${ch}/messages`, {
      ciphertext: 'x',
      file_ids: [elsewhere.body.id, 'not-a-uuid'],
    }),
    400,
  );
  expectError(
    await sp.call(ann, 'POST', `/api/channels/${ch}/messages`, { ciphertext: 'x', file_ids: [elsewhere.body.id] }),
    400,
  );
  assert.is(
    (await sp.call(bob, 'POST', `/api/channels/${ch}/messages`, { ciphertext: 'x', file_ids: [mine.body.id] })).status,
    201,
    'a file of this channel',
  );
  await sp.ok(admin, 'POST', `/api/admin/files/${mine.body.id}/quarantine`, { reason: 'check' });
  expectError(
    await sp.call(ann, 'POST', `/api/channels/${ch}/messages`, { ciphertext: 'x', file_ids: [mine.body.id] }),
    400,
  );
  await sp.ok(admin, 'POST', `/api/admin/files/${mine.body.id}/unquarantine`);
});

test('blocked hashes: stored files quarantined; uploads refused 422 with an audit event; unblock', async ({
  s,
  sp,
  admin,
  ann,
  bob,
  ch,
}) => {
  const data = 'forbidden content';
  const stored = await upload(s, ann, data, { fields: { channel_id: ch } });
  const other = await upload(s, bob, data);
  expectError(await sp.call(ann, 'POST', '/api/admin/blocked-hashes', { sha256: sha(data) }), 403);
  expectError(await sp.call(admin, 'POST', '/api/admin/blocked-hashes', { sha256: 'xyz' }), 400);
  const blocked = await sp.ok(
    admin,
    'POST',
    '/api/admin/blocked-hashes',
    { sha256: sha(data).toUpperCase(), reason: 'abuse' },
    201,
  );
  assert.equal(
    [blocked.sha256, blocked.reason, blocked.quarantined_files, blocked.created_by],
    [sha(data), 'abuse', 2, admin.id],
  );
  expectError(await sp.call(admin, 'POST', '/api/admin/blocked-hashes', { sha256: sha(data) }), 409);
  expectError(await get(s, bob, `/api/files/${stored.body.id}`), 404);
  expectError(await get(s, ann, `/api/files/${stored.body.id}/meta`), 404);
  expectError(await get(s, bob, `/api/files/${other.body.id}`), 404);
  const refused = await upload(s, bob, data, { filename: 'again.txt' });
  expectError(refused, 422);
  assert.is(refused.body.code, 'blocked_content');
  const audit = await s.db.pool.query(
    `SELECT data FROM events WHERE type = 'FileUploadRefused' ORDER BY position DESC LIMIT 1`,
  );
  assert.equal(
    [audit.rows[0].data.user_id, audit.rows[0].data.sha256, audit.rows[0].data.reason],
    [bob.id, sha(data), 'blocked_content'],
  );
  const list = await sp.ok(admin, 'GET', '/api/admin/blocked-hashes');
  assert.ok(list.blocked_hashes.some((b: { id: string }) => b.id === blocked.id));
  const q = await sp.ok(admin, 'GET', '/api/admin/files?quarantined=true');
  assert.ok(
    q.files.some(
      (f: { id: string; quarantine_reason: string }) =>
        f.id === stored.body.id && f.quarantine_reason === 'blocked_hash',
    ),
  );
  // Unblocking admits uploads again; quarantined files stay so until released.
  expectError(await sp.call(admin, 'DELETE', '/api/admin/blocked-hashes/00000000-0000-4000-8000-000000000000'), 404);
  assert.is((await sp.call(admin, 'DELETE', `/api/admin/blocked-hashes/${blocked.id}`)).status, 204);
  expectError(await get(s, bob, `/api/files/${other.body.id}`), 404);
  await sp.ok(admin, 'POST', `/api/admin/files/${other.body.id}/unquarantine`);
  assert.is((await get(s, bob, `/api/files/${other.body.id}`)).status, 200);
  assert.is((await upload(s, bob, data)).status, 201);
});

test('admin files: list with paging and filters, storage stats, quarantine, delete; admins only', async ({
  s,
  sp,
  admin,
  ann,
  bob,
}) => {
  for (const path of ['/api/admin/files', '/api/admin/storage-stats', '/api/admin/blocked-hashes'])
    expectError(await sp.call(ann, 'GET', path), 403);
  const f = await upload(s, bob, 'admin sees me');
  for (const [method, p] of [
    ['DELETE', `/api/admin/files/${f.body.id}`],
    ['POST', `/api/admin/files/${f.body.id}/quarantine`],
    ['POST', `/api/admin/files/${f.body.id}/unquarantine`],
  ] as const) {
    expectError(await sp.call(ann, method, p), 403);
  }
  const page = await sp.ok(admin, 'GET', `/api/admin/files?limit=2&offset=0&uploader_id=${bob.id}`);
  assert.equal([page.limit, page.offset, page.files.length], [2, 0, 2]);
  assert.ok(page.total >= 2);
  assert.is(page.files[0].id, f.body.id, 'newest first');
  assert.equal(Object.keys(page.files[0]).sort(), [
    'channel_id',
    'created_at',
    'id',
    'mime_type',
    'name',
    'quarantine_reason',
    'quarantined',
    'sha256',
    'size',
    'uploader_id',
  ]);
  const stats = await sp.ok(admin, 'GET', '/api/admin/storage-stats');
  assert.ok(
    stats.file_count >= 5 && stats.total_bytes >= stats.blob_bytes && stats.blob_count <= stats.file_count,
    JSON.stringify(stats),
  );
  assert.equal([stats.max_upload_bytes, stats.quota_bytes], [MiB, 3 * MiB]);
  const q = await sp.ok(admin, 'POST', `/api/admin/files/${f.body.id}/quarantine`, { reason: 'looks odd' });
  assert.equal([q.quarantined, q.quarantine_reason], [true, 'looks odd']);
  assert.is(
    (await sp.ok(admin, 'POST', `/api/admin/files/${f.body.id}/quarantine`)).quarantined,
    true,
    'again: no change',
  );
  expectError(await get(s, bob, `/api/files/${f.body.id}`), 404);
  assert.is((await sp.ok(admin, 'POST', `/api/admin/files/${f.body.id}/unquarantine`)).quarantined, false);
  assert.is((await get(s, bob, `/api/files/${f.body.id}`)).status, 200);
  expectError(await sp.call(admin, 'POST', '/api/admin/files/00000000-0000-4000-8000-000000000000/quarantine'), 404);
  assert.is((await sp.call(admin, 'DELETE', `/api/admin/files/${f.body.id}`)).status, 204);
  expectError(await sp.call(admin, 'DELETE', `/api/admin/files/${f.body.id}`), 404);
  expectError(await get(s, bob, `/api/files/${f.body.id}`), 404);
  const after = await sp.ok(admin, 'GET', '/api/admin/storage-stats');
  assert.is(after.file_count, stats.file_count - 1);
});

test('the sweep removes blobs no live file has referred to for 24 hours, and keeps the rest', async ({ s, ann }) => {
  const gone = await upload(s, ann, 'swept away');
  const kept = await upload(s, ann, 'kept here');
  assert.is(
    (
      await http(`${s.chat}/api/files/${gone.body.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${ann.access}` },
      })
    ).status,
    204,
  );
  const store = new FilesystemBlobStore(filesDir(s));
  const referenced = (h: string) => blobReferenced(s.db.pool, h);
  assert.equal(await store.sweep(new Date(), referenced), [], 'nothing within 24 hours');
  const removed = await store.sweep(new Date(Date.now() + 25 * 3600 * 1000), referenced);
  assert.ok(removed.includes(gone.body.sha256));
  assert.not.ok(removed.includes(kept.body.sha256));
  assert.is(await store.exists(gone.body.sha256), false);
  assert.is((await get(s, ann, `/api/files/${kept.body.id}`)).text, 'kept here');
});

test('every file event is in the log; rebuilt read models equal the live ones', async ({ s }) => {
  const text = await logText(s);
  for (const type of [...FILE_EVENT_TYPES, ...BLOCKED_HASH_EVENT_TYPES, 'FileUploadRefused'])
    assert.ok(text.includes(` ${type} `), type);
  const TABLES = ['chat_files', 'chat_blocked_hashes', 'chat_messages'];
  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(TABLES.map(async (t) => [t, (await s.db.pool.query(`SELECT * FROM ${t} ORDER BY 1, 2`)).rows])),
    );
  const live = await snapshot();
  await s.platform.engine.stop();
  for (const name of ['chat_files', 'chat_messages']) assert.ok((await s.platform.engine.rebuild(name)) > 0, name);
  assert.equal(await snapshot(), live);
});

test.run();
