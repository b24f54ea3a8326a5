// Who the fuzzer calls as, and the real resources path parameters can name. Each operation gets
// "the right principal" (the one its route family serves: the admin key on orchestration's
// /api/v1, an admin browser session on its /api/ mirrors, the runner key on /api/v1/runner, the
// chat instance admin's bearer, a registry admin through forward-auth), a lesser one (readonly
// key or session, an ordinary chat member, a read-only registry user) and none at all.
//
// Routes that would end or change the principal they are called as (rotate my key, log out,
// delete my account, revoke all my sessions, change my password, turn on TOTP) get a fresh
// principal made for that one request, so they cannot sabotage the rest of the run. Routes that
// act on another account (admin user routes, bans, kicks) are pointed at a victim account that
// no principal uses.

import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BOOTSTRAP_ADMIN_ID } from '../../../domain/orchestration/users/decider.ts';
import { bearer, registerChat, uniqueName, type ChatAccount } from '../../support/chat.ts';
import { browser, createAccount, login, type Account, type Session } from '../../support/principals.ts';
import { interactive, mintToken, type Interactive } from '../../support/registry.ts';
import { http, type TestServices } from '../../support/services.ts';
import { fileUpload, png } from '../../support/multipart.ts';
import { Spaces } from '../../support/spaces.ts';
import type { Operation } from './documents.ts';
import { userStream } from '../../../domain/orchestration/streams.ts';

export const ADMIN_KEY = `orch_fuzz-admin-${randomUUID()}`;
export const RUNNER_KEY = `orch_fuzz-runner-${randomUUID()}`;
export const BOOTSTRAP_SECRET = 'fuzz-bootstrap-secret-0000000000000000';

/**
 * The environment of the fuzzed services: the admin key in a file (the form that lets the
 * runner key register), the registry trusting forward-auth from the in-process peer, and limits
 * high enough that the run measures the routes, not the limiters (a 429 is still checked
 * against the document wherever one comes).
 */
export async function fuzzEnv(dir: string): Promise<Record<string, string>> {
  const file = path.join(dir, 'fuzz-admin.key');
  await writeFile(file, `${ADMIN_KEY}\n`, { mode: 0o600 });
  return {
    ADMIN_API_KEY_FILE: file,
    ORCH_RUNNER_API_KEY: RUNNER_KEY,
    REGISTRY_FORWARD_AUTH_TRUSTED_NETS: '127.0.0.1/32,::1/128',
    REGISTRY_TOKEN_RATE_PER_MIN: '1000000',
    CHATSVC_AUTH_RATE_PER_MIN: '1000000',
    CHATSVC_API_RATE_PER_SEC: '1000000',
    ORCH_PUBLIC_CHAT_RPM: '1000000',
    CHATSVC_BOOTSTRAP_SECRET: BOOTSTRAP_SECRET,
  };
}

export type Who = 'right' | 'lesser' | 'none';

export interface World {
  s: TestServices;
  orch: { readonly: Account; adminAccount: Account; adminSession: Session; logoutSession: Session; target: Account };
  chat: { admin: ChatAccount; member: ChatAccount; victim: ChatAccount };
  registry: { admin: Interactive; readonly: Interactive };
  /** Real resource ids by name (see PATH_RESOURCES). */
  ids: Record<string, string>;
}

/** An account without a password (nothing to hash). */
async function keyOnly(s: TestServices, role: Account['role'], name: string): Promise<Account> {
  const r = await http(`${s.orch}/api/v1/admin/users`, {
    headers: { 'X-API-Key': ADMIN_KEY },
    json: { username: name, email: `${name}@example.test`, role },
  });
  if (r.status !== 201) throw new Error(`fuzz world, account ${name}: ${r.status} ${r.text}`);
  return { id: r.body.id, username: name, email: `${name}@example.test`, password: '', apiKey: r.body.api_key, role };
}

const ok = async (label: string, reply: Promise<{ status: number; text: string; body: any }>, status = 201) => {
  const r = await reply;
  if (r.status !== status) throw new Error(`fuzz world, ${label}: ${r.status} ${r.text}`);
  return r.body;
};

export async function buildWorld(s: TestServices): Promise<World> {
  const key = { 'X-API-Key': ADMIN_KEY };
  // Password hashing (scrypt, 128 MiB) is the slow part of the world: one password account,
  // two sessions of it (the second for logout); every other account has a key only.
  const [readonly, target, adminAccount] = await Promise.all([
    keyOnly(s, 'readonly', 'fuzz-readonly'),
    keyOnly(s, 'user', 'fuzz-target'),
    createAccount(s, ADMIN_KEY, 'admin', 'fuzz-admin'),
  ]);
  const [adminSession, logoutSession] = await Promise.all([login(s, adminAccount), login(s, adminAccount)]);
  const ids: Record<string, string> = {};
  const profile = await ok(
    'profile',
    http(`${s.orch}/api/v1/agent-chat/profiles`, {
      headers: key,
      json: { slug: 'fuzz-bot', name: 'Fuzz bot', security_tier: 1 },
    }),
  );
  ids.profileSlug = profile.slug;
  ids.profileId = profile.id;
  ids.snippet = (
    await ok(
      'snippet',
      http(`${s.orch}/api/v1/bots/${profile.id}/knowledge`, {
        headers: key,
        json: { title: 'fuzz', content: 'fuzz snippet' },
      }),
    )
  ).id;
  ids.project = (
    await ok(
      'project',
      http(`${s.orch}/api/v1/projects`, { headers: key, json: { name: 'fuzz', repo_path: '/srv/fuzz' } }),
    )
  ).id;
  ids.task = (
    await ok(
      'task',
      http(`${s.orch}/api/v1/tasks`, { headers: key, json: { project_id: ids.project, title: 't', priority: 'low' } }),
    )
  ).id;
  const templates = await http(`${s.orch}/api/v1/templates`, { headers: key });
  ids.template = templates.body?.templates?.[0]?.slug ?? templates.body?.[0]?.slug ?? 'none';
  ids.targetUser = target.id;
  ids.stream = userStream(BOOTSTRAP_ADMIN_ID);

  const sp = new Spaces(s);
  const chatAdmin = await registerChat(s.chat, uniqueName('fuzzadmin')); // the first account: instance admin
  const [member, victim] = await Promise.all([
    registerChat(s.chat, uniqueName('fuzzmember')),
    registerChat(s.chat, uniqueName('fuzzvictim')),
  ]);
  ids.community = await sp.community(chatAdmin, 'Fuzz');
  await sp.join(ids.community, chatAdmin, [member, victim]);
  ids.group = await sp.group(chatAdmin, ids.community);
  await sp.ok(member, 'POST', `/api/groups/${ids.group}/join`);
  await sp.ok(victim, 'POST', `/api/groups/${ids.group}/join`);
  ids.channel = await sp.channel(chatAdmin, ids.group, [member, victim]);
  ids.message = (await sp.post(chatAdmin, ids.channel, 'fuzz root')).id;
  ids.poll = (
    await sp.ok(member, 'POST', `/api/channels/${ids.channel}/polls`, { question: 'q', options: ['a', 'b'] }, 201)
  ).id;
  const invite = await sp.ok(chatAdmin, 'POST', `/api/communities/${ids.community}/invites`, {}, 201);
  ids.inviteCode = invite.code;
  ids.invite = invite.id;
  ids.victim = victim.id;
  // A file (a PNG: its download is served with its stored type) and a scheduled message.
  ids.file = (
    await ok(
      'file',
      http(
        `${s.chat}/api/files/upload`,
        fileUpload(chatAdmin, png(7), { filename: 'fuzz.png', fields: { channel_id: ids.channel } }),
      ),
    )
  ).id;
  ids.scheduled = (
    await sp.ok(
      chatAdmin,
      'POST',
      '/api/messages/schedule',
      { channel_id: ids.channel, ciphertext: 'later', send_at: new Date(Date.now() + 86_400_000).toISOString() },
      201,
    )
  ).id;

  const registryAdmin = await interactive(s, 'fuzz-admin', 'admin');
  const registryReadonly = await interactive(s, 'fuzz-reader', 'readonly');
  const rk = { headers: registryAdmin.headers };
  ids.customer =
    (
      await ok(
        'customer',
        http(`${s.registry}/api/v1/customers`, { ...rk, json: { slug: 'fuzz-co', name: 'Fuzz Co' } }),
      )
    ).slug ?? 'fuzz-co';
  ids.deployment = (
    await ok(
      'deployment',
      http(`${s.registry}/api/v1/deployments`, {
        ...rk,
        json: { customer_slug: 'fuzz-co', product: 'chat', version: '1.2.0' },
      }),
    )
  ).id;
  ids.subscription = (
    await ok(
      'subscription',
      http(`${s.registry}/api/v1/subscriptions`, {
        ...rk,
        json: { customer_slug: 'fuzz-co', product: 'chat', mrr_cents: 9900, status: 'active' },
      }),
    )
  ).id;
  ids.registryToken = (await mintToken(s, registryAdmin, ['deployments:read'])).id;

  return {
    s,
    ids,
    orch: { readonly, adminAccount, adminSession, logoutSession, target },
    chat: { admin: chatAdmin, member, victim },
    registry: { admin: registryAdmin, readonly: registryReadonly },
  };
}

/**
 * Path parameters filled with real resources: [service, pattern on the path up to and including
 * the parameter, resource name]. The first match wins; a parameter with none is generated.
 */
const PATH_RESOURCES: Array<[Operation['service'], RegExp, string]> = [
  ['orch', /profiles\/\{slug\}$|chat\/\{slug\}$/, 'profileSlug'],
  ['orch', /\/(bots|agents)\/\{profile_id\}$/, 'profileId'],
  ['orch', /knowledge\/\{id\}$/, 'snippet'],
  ['orch', /templates\/\{slug\}$/, 'template'],
  ['orch', /users\/\{user_id\}$/, 'targetUser'],
  ['orch', /projects\/\{id\}$/, 'project'],
  ['orch', /tasks\/\{id\}$/, 'task'],
  ['orch', /streams\/\{stream\}$/, 'stream'],
  ['chat', /communities\/\{cid\}$/, 'community'],
  [
    'chat',
    /\{uid\}$|users\/\{user_id\}$|keys\/\{user_id\}$|admin\/users\/\{id\}$|purge\/user\/\{id\}$|members\/\{user_id\}$/,
    'victim',
  ],
  ['chat', /channels\/\{chid\}$|channels\/\{id\}$|purge\/channel\/\{id\}$/, 'channel'],
  ['chat', /invites\/\{iid\}$/, 'invite'],
  ['chat', /(community|group)-invites\/\{code\}$/, 'inviteCode'],
  ['chat', /groups\/\{id\}$/, 'group'],
  ['chat', /\{msg_id\}$|bookmarks\/\{message_id\}$|purge\/message\/\{id\}$|admin\/messages\/\{id\}$/, 'message'],
  ['chat', /polls\/\{id\}$/, 'poll'],
  ['chat', /files\/\{id\}$/, 'file'],
  ['chat', /scheduled\/\{id\}$/, 'scheduled'],
  ['registry', /customers\/\{slug\}$/, 'customer'],
  ['registry', /deployments\/\{id\}$/, 'deployment'],
  ['registry', /subscriptions\/\{id\}$/, 'subscription'],
  ['registry', /tokens\/\{id\}$/, 'registryToken'],
];

/** The real resource a path parameter can name, if the world has one. */
export function realResource(world: World, op: Operation, name: string): string | undefined {
  const upTo = op.path.slice(0, op.path.indexOf(`{${name}}`) + name.length + 2);
  for (const [service, pattern, resource] of PATH_RESOURCES) {
    if (service === op.service && pattern.test(upTo)) return world.ids[resource];
  }
  return undefined;
}

/**
 * Operations that end or change the principal they are called as: a fresh principal (per request
 * where it is cheap; per operation for chat accounts, whose registration hashes a password; orch
 * logout ends a session of its own, made for it).
 */
const SELF_ENDING = new Set([
  'orch POST /api/v1/me/api-key/rotate',
  'orch POST /auth/logout',
  'chat DELETE /api/account/delete',
  'chat POST /api/account/change-password',
  'chat POST /api/account/sessions/revoke-all',
  'chat DELETE /api/account/sessions/{id}',
  'chat POST /api/totp/setup',
  'chat POST /api/totp/verify',
  'chat POST /api/totp/disable',
  'registry POST /api/v1/auth/logout',
]);

/** Operations called without credentials by design (their own secret is in the request, or they are public). */
const ANONYMOUS =
  /^(orch POST \/auth\/(login|register)$|orch GET \/api\/v1\/health|orch POST \/api\/v1\/public\/|chat POST \/api\/auth\/|chat GET \/api\/auth\/config|chat GET \/api\/health|chat POST \/api\/webhooks\/execute\/|chat GET \/api\/calendar\/feeds\/|chat POST \/api\/admin\/bots\/bootstrap-token|registry GET \/health|registry GET \/api\/v1\/auth\/(login|callback))/;

const freshChat = new Map<string, Promise<ChatAccount>>();

export const isSelfEnding = (op: Operation) => SELF_ENDING.has(op.key);

/** The headers of `who` for this operation (a fresh principal for self-ending operations). */
export async function credentials(world: World, op: Operation, who: Who): Promise<Record<string, string>> {
  if (who === 'none') return {};
  const { s } = world;
  if (who === 'right' && op.key === 'chat POST /api/admin/bots/bootstrap-token')
    return { 'x-provision-bootstrap-secret': BOOTSTRAP_SECRET };
  if (who === 'right' && ANONYMOUS.test(op.key) && op.key !== 'orch POST /auth/register') return {};
  switch (op.service) {
    case 'orch': {
      const mirror = (op.path.startsWith('/api/') && !op.path.startsWith('/api/v1/')) || op.path.startsWith('/auth/');
      // A readonly session would cost a password hash; the readonly key on a mirror is refused as a key (403).
      if (who === 'lesser') return { 'X-API-Key': world.orch.readonly.apiKey };
      if (op.key === 'orch POST /auth/logout') return browser(s, world.orch.logoutSession);
      if (isSelfEnding(op))
        return { 'X-API-Key': (await keyOnly(s, 'user', `fuzz-fresh-${randomUUID().slice(0, 8)}`)).apiKey };
      if (op.path.startsWith('/api/v1/runner/')) return { 'X-API-Key': RUNNER_KEY };
      return mirror ? browser(s, world.orch.adminSession) : { 'X-API-Key': ADMIN_KEY };
    }
    case 'chat': {
      if (who === 'lesser') return bearer(world.chat.member);
      if (isSelfEnding(op)) {
        if (!freshChat.has(op.key)) freshChat.set(op.key, registerChat(s.chat, uniqueName('fuzzfresh')));
        return bearer(await freshChat.get(op.key)!);
      }
      return bearer(world.chat.admin);
    }
    case 'registry': {
      if (who === 'lesser') return world.registry.readonly.headers;
      if (isSelfEnding(op)) return (await interactive(s, `fuzz-fresh-${randomUUID().slice(0, 8)}`, 'admin')).headers;
      return world.registry.admin.headers;
    }
  }
}
