// A chat service's JSON calls and one channel with members, as the chat benchmarks set them up:
// an owner, a community, a group and a channel `posts`, and `count` members who joined all three.

import { generateIdentityKeyPair, generateSignedPrekey } from '../crypto/e2ee/index.ts';

const wire = (b: Uint8Array) => Array.from(b);

export interface Member {
  id: string;
  token: string;
}

/** A JSON call; a status of 300 or more throws with the body. `headers` adds to the request's (a trace id). */
export type ChatCall = (
  method: string,
  route: string,
  token: string | null,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<any>;

export function chatCaller(base: string): ChatCall {
  return async (method, route, token, body, headers = {}) => {
    const r = await fetch(`${base}${route}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${route}: ${r.status} ${text}`);
    return text ? JSON.parse(text) : null;
  };
}

/** A registered account with a fresh identity key and signed prekey (no one-time prekeys). */
export async function registerMember(call: ChatCall, name: string): Promise<Member> {
  const identity = generateIdentityKeyPair();
  const spk = generateSignedPrekey(identity, 1);
  const r = await call('POST', '/api/auth/register', null, {
    username: name,
    email: `${name}@bench.test`,
    password: `bench-password-${name}`,
    identity_key: wire(identity.publicKey),
    signed_prekey: { key_id: 1, public_key: wire(spk.publicKey), signature: wire(spk.signature) },
    one_time_prekeys: [],
  });
  return { id: r.user.id as string, token: r.access_token as string };
}

export interface BenchChannel {
  owner: Member;
  communityId: string;
  groupId: string;
  channelId: string;
  members: Member[];
}

export async function channelWithMembers(call: ChatCall, count: number): Promise<BenchChannel> {
  const owner = await registerMember(call, 'bench_owner');
  const communityId = (await call('POST', '/api/communities', owner.token, { name: 'Bench' })).id as string;
  const groupId = (await call('POST', '/api/groups', owner.token, { community_id: communityId, name: 'bench' }))
    .id as string;
  const channelId = (await call('POST', `/api/groups/${groupId}/channels`, owner.token, { name: 'posts' }))
    .id as string;
  const members: Member[] = [];
  for (let i = 0; i < count; i++) {
    const m = await registerMember(call, `bench_member_${i}`);
    const invite = await call('POST', `/api/communities/${communityId}/invites`, owner.token, {});
    await call('POST', `/api/community-invites/${invite.code}/accept`, m.token);
    await call('POST', `/api/groups/${groupId}/join`, m.token);
    await call('POST', `/api/channels/${channelId}/join`, m.token);
    members.push(m);
  }
  return { owner, communityId, groupId, channelId, members };
}
