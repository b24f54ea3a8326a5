// Communities, groups and channels for chat suites, built through the real API.

import * as assert from 'uvu/assert';
import { bearer, registerChat, uniqueName, type ChatAccount } from './chat.ts';
import { http, type Reply } from './services.ts';

export function expectStatus(r: Reply, status: number): Reply {
  assert.is(r.status, status, `expected ${status}, got ${r.status}: ${r.text}`);
  return r;
}

export class Spaces {
  /** `services.chat` is read at each call: a restarted service has a new origin. */
  constructor(private readonly services: { chat: string }) {}

  get base(): string {
    return this.services.chat;
  }

  call(account: { access: string } | null, method: string, path: string, json?: unknown): Promise<Reply> {
    return http(`${this.base}${path}`, {
      method,
      headers: account ? bearer(account) : {},
      ...(json !== undefined ? { json } : {}),
    });
  }

  async ok(
    account: { access: string } | null,
    method: string,
    path: string,
    json?: unknown,
    status = 200,
  ): Promise<any> {
    return expectStatus(await this.call(account, method, path, json), status).body;
  }

  async register(prefix: string): Promise<ChatAccount> {
    return registerChat(this.base, uniqueName(prefix));
  }

  async community(owner: ChatAccount, name = 'Garden'): Promise<string> {
    return (await this.ok(owner, 'POST', '/api/communities', { name }, 201)).id;
  }

  /** Mint an invite as `by` and accept it as each of `users`. */
  async join(cid: string, by: ChatAccount, users: ChatAccount[], grants_role: string | null = null): Promise<void> {
    for (const user of users) {
      const invite = await this.ok(by, 'POST', `/api/communities/${cid}/invites`, { grants_role }, 201);
      await this.ok(user, 'POST', `/api/community-invites/${invite.code}/accept`);
    }
  }

  async group(by: ChatAccount, cid: string, visibility = 'public', name = 'Team'): Promise<string> {
    return (await this.ok(by, 'POST', '/api/groups', { community_id: cid, name, visibility }, 201)).id;
  }

  /** A group channel with the given users joined. */
  async channel(by: ChatAccount, gid: string, members: ChatAccount[] = [], name = 'general'): Promise<string> {
    const id = (await this.ok(by, 'POST', `/api/groups/${gid}/channels`, { name }, 201)).id;
    for (const m of members) await this.ok(m, 'POST', `/api/channels/${id}/join`);
    return id;
  }

  async post(
    by: ChatAccount,
    channelId: string,
    ciphertext: string,
    extra: Record<string, unknown> = {},
  ): Promise<any> {
    return this.ok(by, 'POST', `/api/channels/${channelId}/messages`, { ciphertext, ...extra }, 201);
  }
}
