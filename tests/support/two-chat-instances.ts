// Two real chat server processes on one fresh database, with an owner on one and a member on the
// other sharing a channel, and a platform without projections for appending seeds: the world of
// the scheduler's and the meetings' end-to-end suites.

import * as assert from 'uvu/assert';
import type { Platform } from '../../main/platform.ts';
import { bearer, registerChat, uniqueName, type ChatAccount } from './chat.ts';
import { startChatProcess, type ChatProcess } from './chat-process.ts';
import { freshDatabase, type TestDatabase } from './database.ts';
import { seedingPlatform } from './schedule.ts';
import { http } from './services.ts';

export interface TwoInstances {
  db: TestDatabase;
  a: ChatProcess;
  b: ChatProcess;
  seed: Platform;
  owner: ChatAccount;
  ann: ChatAccount;
  chid: string;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request as `who`, asserting its status; the body. */
export async function call(base: string, who: ChatAccount, method: string, path: string, json?: unknown, status = 200) {
  const r = await http(`${base}${path}`, { method, headers: bearer(who), ...(json !== undefined ? { json } : {}) });
  assert.is(r.status, status, `${method} ${path}: ${r.text}`);
  return r.body;
}

/** Both instances, the owner (registered on `a`) and Ann (on `b`) in one channel of a community named `community`. */
export async function startTwoInstances(label: string, community: string): Promise<TwoInstances> {
  const db = await freshDatabase(label);
  const env = { CHATSVC_AUTH_RATE_PER_MIN: '100000', CHATSVC_API_RATE_PER_SEC: '100000' };
  const [a, b] = await Promise.all([startChatProcess(db.url, env), startChatProcess(db.url, env)]);
  const seed = await seedingPlatform(db.url);
  const owner = await registerChat(a.url, uniqueName('own'));
  const ann = await registerChat(b.url, uniqueName('ann'));
  const cid = (await call(a.url, owner, 'POST', '/api/communities', { name: community }, 201)).id;
  const invite = await call(a.url, owner, 'POST', `/api/communities/${cid}/invites`, {}, 201);
  await call(b.url, ann, 'POST', `/api/community-invites/${invite.code}/accept`);
  const gid = (
    await call(a.url, owner, 'POST', '/api/groups', { community_id: cid, name: 'G', visibility: 'public' }, 201)
  ).id;
  await call(b.url, ann, 'POST', `/api/groups/${gid}/join`);
  const chid = (await call(a.url, owner, 'POST', `/api/groups/${gid}/channels`, { name: 'c' }, 201)).id;
  await call(b.url, ann, 'POST', `/api/channels/${chid}/join`);
  return { db, a, b, seed, owner, ann, chid };
}

export async function stopTwoInstances(ctx: Partial<TwoInstances>): Promise<void> {
  await ctx.a?.kill();
  await ctx.b?.kill();
  await ctx.seed?.close();
  await ctx.db?.drop();
}
