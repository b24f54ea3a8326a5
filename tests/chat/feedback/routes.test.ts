// Feedback through real HTTP, mirrored to a local HTTP server speaking the GitHub issues API:
// the local row first, the issue with its `instance:<host>` label and Bearer token, forwarded_to
// on success only, a failing tracker never loses the row; the admin queue with per-status
// counts, triage, and the screenshot's bytes with their MIME type.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { expectError, type ChatAccount } from '../../support/chat.ts';
import { createApp } from '../../../main/apps.ts';
import { logText, startTestApps, type TestServices } from '../../support/services.ts';
import { Spaces } from '../../support/spaces.ts';

interface Issue {
  path: string;
  auth: string | undefined;
  body: any;
}
interface Ctx {
  s: TestServices;
  sp: Spaces;
  admin: ChatAccount;
  ann: ChatAccount;
  tracker: Server;
  issues: Issue[];
  fail: { on: boolean };
}
const test = suite<Ctx>('chat feedback');
test.before(async (ctx) => {
  ctx.issues = [];
  ctx.fail = { on: false };
  ctx.tracker = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      if (ctx.fail.on) {
        res.writeHead(502).end('down');
        return;
      }
      ctx.issues.push({ path: req.url ?? '', auth: req.headers.authorization, body: JSON.parse(text) });
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ number: ctx.issues.length }));
    });
  });
  await new Promise<void>((r) => ctx.tracker.listen(0, '127.0.0.1', r));
  const port = (ctx.tracker.address() as AddressInfo).port;
  ctx.s = await startTestApps('chat_feedback', {
    CHATSVC_AUTH_RATE_PER_MIN: '100000',
    CHATSVC_API_RATE_PER_SEC: '100000',
    CHATSVC_PUBLIC_URL: 'https://chat.example.org',
    FEEDBACK_TRACKER_BASE_URL: `http://127.0.0.1:${port}/api/v3/`,
    FEEDBACK_TRACKER_REPO: 'acme/feedback',
    FEEDBACK_TRACKER_TOKEN: 'tracker-token-secret',
  });
  ctx.sp = new Spaces(ctx.s);
  ctx.admin = await ctx.sp.register('adm');
  ctx.ann = await ctx.sp.register('ann');
});
test.after(async ({ s, tracker }) => {
  await s?.close();
  await new Promise((r) => tracker?.close(r));
});

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

test('submit: stored, mirrored with the instance label, screenshot kept; a failing tracker keeps the row', async ({
  s,
  sp,
  ann,
  issues,
  fail,
}) => {
  expectError(await sp.call(null, 'POST', '/api/feedback', { description: 'x' }), 401);
  expectError(await sp.call(ann, 'POST', '/api/feedback', { description: '' }), 400);
  expectError(
    await sp.call(ann, 'POST', '/api/feedback', {
      description: 'x',
      screenshot: { data: PNG.toString('base64'), mime_type: 'text/html' },
    }),
    400,
  );
  expectError(
    await sp.call(ann, 'POST', '/api/feedback', {
      description: 'x',
      screenshot: { data: Buffer.alloc(5 * 1024 * 1024 + 1).toString('base64'), mime_type: 'image/png' },
    }),
    400,
  );
  const first = await sp.ok(
    ann,
    'POST',
    '/api/feedback',
    {
      description: 'The send button hides\nsecond line',
      screenshot: { data: PNG.toString('base64'), mime_type: 'image/png' },
    },
    201,
  );
  assert.is(first.status, 'new');
  assert.is(first.has_screenshot, true);
  assert.equal(first.forwarded_to, [
    'http://127.0.0.1:' + new URL(s.env.FEEDBACK_TRACKER_BASE_URL!).port + '/api/v3/repos/acme/feedback',
  ]);
  assert.is(issues.length, 1);
  assert.is(issues[0]!.path, '/api/v3/repos/acme/feedback/issues');
  assert.is(issues[0]!.auth, 'Bearer tracker-token-secret');
  assert.equal(issues[0]!.body.labels, ['instance:chat.example.org']);
  assert.ok(issues[0]!.body.body.includes('The send button hides'));
  fail.on = true;
  const second = await sp.ok(ann, 'POST', '/api/feedback', { description: 'Tracker is down' }, 201);
  assert.equal(second.forwarded_to, []);
  fail.on = false;
  assert.not.ok((await logText(s)).includes('tracker-token-secret'));
  assert.not.ok(s.logLines.join('\n').includes('tracker-token-secret'));
});

test('admin queue: counts by status, filter, triage records who and when, the screenshot bytes', async ({
  s,
  sp,
  admin,
  ann,
}) => {
  expectError(await sp.call(ann, 'GET', '/api/admin/feedback'), 403);
  const queue = await sp.ok(admin, 'GET', '/api/admin/feedback');
  assert.equal(queue.counts, { new: 2, triaged: 0, closed: 0 });
  const withShot = queue.feedback.find((f: { has_screenshot: boolean }) => f.has_screenshot);
  expectError(await sp.call(admin, 'PATCH', `/api/admin/feedback/${withShot.id}`, { status: 'done' }), 400);
  expectError(await sp.call(ann, 'PATCH', `/api/admin/feedback/${withShot.id}`, { status: 'triaged' }), 403);
  const triaged = await sp.ok(admin, 'PATCH', `/api/admin/feedback/${withShot.id}`, { status: 'triaged' });
  assert.is(triaged.triaged_by, admin.id);
  assert.ok(triaged.triaged_at);
  const filtered = await sp.ok(admin, 'GET', '/api/admin/feedback?status=triaged');
  assert.equal(
    filtered.feedback.map((f: { id: string }) => f.id),
    [withShot.id],
  );
  assert.equal(filtered.counts, { new: 1, triaged: 1, closed: 0 });
  // The raw bytes, straight from the app (the suite's http helper reads bodies as text).
  const shot = await createApp('chat', s.platform).request(`/api/admin/feedback/${withShot.id}/screenshot`, {
    headers: { authorization: `Bearer ${admin.access}` },
  });
  assert.is(shot.status, 200);
  assert.is(shot.headers.get('content-type'), 'image/png');
  assert.equal(Buffer.from(await shot.arrayBuffer()), PNG);
  const other = queue.feedback.find((f: { has_screenshot: boolean }) => !f.has_screenshot);
  expectError(await sp.call(admin, 'GET', `/api/admin/feedback/${other.id}/screenshot`), 404);
  expectError(
    await sp.call(admin, 'PATCH', '/api/admin/feedback/00000000-0000-4000-8000-000000000000', { status: 'closed' }),
    404,
  );
});

test.run();
