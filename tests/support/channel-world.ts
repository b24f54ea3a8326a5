// The in-process chat world of the content suites (messages, polls, meetings, scheduled
// messages, bookmarks, the admin surface): the apps with the chat's limits lifted, the chat
// background (scheduler, reactors) built unstarted to drive by hand, an owner (the first account:
// the instance owner), Ann and Bob in one community, one group, and by default one channel of
// theirs, and Out, a community member outside that channel.
//
// A suite that counts accounts or channels says what of the world it does without: Out left
// outside the community or not registered at all, no channel (it makes its own in `gid`).

import type { ChatBackground } from '../../main/chat-background.ts';
import type { ChatAccount } from './chat.ts';
import { backgroundOf } from './schedule.ts';
import { startTestApps, type TestServices } from './services.ts';
import { Spaces } from './spaces.ts';

/** Where Out stands: a community member outside the channel, registered but in no community, or absent. */
type Out = 'member' | 'outsider' | 'absent';

export interface WorldShape<O extends Out, C extends boolean> {
  out?: O;
  /** The channel of Ann and Bob (true, the default), or none. */
  channel?: C;
  /** Settings beyond the lifted limits. */
  env?: Record<string, string>;
}

interface Base {
  s: TestServices;
  sp: Spaces;
  bg: ChatBackground;
  owner: ChatAccount;
  ann: ChatAccount;
  bob: ChatAccount;
  cid: string;
  gid: string;
}
/** The world of a shape: `out` unless absent, `chid` unless there is no channel. */
export type World<O extends Out = 'member', C extends boolean = true> = Base &
  (O extends 'absent' ? unknown : { out: ChatAccount }) &
  (C extends false ? unknown : { chid: string });
export type ChannelWorld = World;

/** The chat's rate limits lifted, for suites that register many accounts and make many calls. */
export const LIFTED_LIMITS = { CHATSVC_AUTH_RATE_PER_MIN: '100000', CHATSVC_API_RATE_PER_SEC: '100000' };

/** The apps with the chat's limits lifted (and `env`), and Spaces over them: where every chat world starts. */
export async function startSpaces(
  label: string,
  env: Record<string, string> = {},
): Promise<{ s: TestServices; sp: Spaces }> {
  const s = await startTestApps(label, { ...LIFTED_LIMITS, ...env });
  return { s, sp: new Spaces(s) };
}

export async function startChannelWorld<O extends Out = 'member', C extends boolean = true>(
  label: string,
  shape: WorldShape<O, C> = {},
): Promise<World<O, C>> {
  const { s, sp } = await startSpaces(label, shape.env);
  const bg = backgroundOf(s.platform);
  const owner = await sp.register('own');
  const ann = await sp.register('ann');
  const bob = await sp.register('bob');
  const out = shape.out === 'absent' ? undefined : await sp.register('out');
  const cid = await sp.community(owner);
  await sp.join(cid, owner, out && (shape.out ?? 'member') === 'member' ? [ann, bob, out] : [ann, bob]);
  const gid = await sp.group(owner, cid);
  const chid = shape.channel === false ? undefined : await sp.channel(owner, gid, [ann, bob]);
  return { s, sp, bg, owner, ann, bob, cid, gid, ...(out && { out }), ...(chid && { chid }) } as World<O, C>;
}

export async function stopChannelWorld({ s, bg }: Partial<Base>): Promise<void> {
  await bg?.stop();
  await s?.close();
}
