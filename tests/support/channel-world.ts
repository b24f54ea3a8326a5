// The in-process chat world of the content suites (polls, meetings): the apps with the chat's
// limits lifted, the chat background (scheduler, reactors) to drive by hand, an owner, Ann and
// Bob in one channel of one group, and Out, a community member outside that channel.

import type { ChatBackground } from '../../main/chat-background.ts';
import type { ChatAccount } from './chat.ts';
import { backgroundOf } from './schedule.ts';
import { startTestApps, type TestServices } from './services.ts';
import { Spaces } from './spaces.ts';

export interface ChannelWorld { s: TestServices; sp: Spaces; bg: ChatBackground; owner: ChatAccount; ann: ChatAccount; bob: ChatAccount; out: ChatAccount; cid: string; gid: string; chid: string }

export async function startChannelWorld(label: string): Promise<ChannelWorld> {
  const s = await startTestApps(label, { CHATSVC_AUTH_RATE_PER_MIN: '100000', CHATSVC_API_RATE_PER_SEC: '100000' });
  const sp = new Spaces(s);
  const bg = backgroundOf(s.platform);
  const owner = await sp.register('own');
  const ann = await sp.register('ann');
  const bob = await sp.register('bob');
  const out = await sp.register('out');
  const cid = await sp.community(owner);
  await sp.join(cid, owner, [ann, bob, out]);
  const gid = await sp.group(owner, cid);
  const chid = await sp.channel(owner, gid, [ann, bob]);
  return { s, sp, bg, owner, ann, bob, out, cid, gid, chid };
}

export async function stopChannelWorld({ s, bg }: Partial<ChannelWorld>): Promise<void> {
  await bg?.stop();
  await s?.close();
}
