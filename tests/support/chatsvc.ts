// The chat-service connector end to end: the real chat and orchestration services, a provision
// token from the chat's bootstrap route, and human clients on the e2ee library that talk to the
// bot encrypted (X3DH + Double Ratchet in DMs, sender keys in channels).

import { randomUUID } from 'node:crypto';
import {
  createInitiatorSession,
  createSenderKey,
  createSenderKeyReceiver,
  decryptDm,
  decryptGroup,
  encryptDm,
  encryptGroup,
  senderKeyDistribution,
  type SenderKeyReceiver,
  type SenderKeyState,
  type Session,
} from '../../crypto/e2ee/index.ts';
import { bearer, type ChatAccount } from './chat.ts';
import { http, type TestServices } from './services.ts';
import { Spaces } from './spaces.ts';
import { connectWs, type WsClient } from './ws.ts';
import { until } from './until.ts';

export const BOOTSTRAP_SECRET = 'bootstrap-secret-for-the-connector-suite-0123456789';
export const INTEGRATION_KEY = 'c3'.repeat(32);

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

export async function provisionToken(s: TestServices): Promise<string> {
  const r = await http(`${s.chat}/api/admin/bots/bootstrap-token`, {
    method: 'POST',
    headers: { 'x-provision-bootstrap-secret': BOOTSTRAP_SECRET },
  });
  if (r.status !== 201) throw new Error(`bootstrap-token: ${r.status} ${r.text}`);
  return r.body.token.token;
}

/** A human on the e2ee library: DMs with the bot, a sender key per channel, a socket. */
export class Human {
  private dm: Session | null = null;
  private readonly own = new Map<string, SenderKeyState>();
  private readonly receivers = new Map<string, SenderKeyReceiver>();
  /** Bot messages `botMessage` has returned, and where this socket's frames stood at the last send. */
  private readonly returned = new Set<string>();
  private sentMark = 0;
  ws!: WsClient;
  /** What to print when the bot stays silent too long (the world sets it: the connector's recent log lines). */
  diagnose: () => string = () => '';

  constructor(
    readonly spaces: Spaces,
    readonly account: ChatAccount,
  ) {}

  async connect(): Promise<void> {
    this.ws = await connectWs(this.spaces.base);
    this.sentMark = 0;
    this.ws.send({ type: 'Authenticate', token: this.account.access });
    await this.ws.next((f) => f.type === 'Authenticated');
  }

  async subscribe(channelId: string): Promise<void> {
    this.ws.send({ type: 'Subscribe', channel_id: channelId });
    await this.ws.next((f) => f.type === 'Subscribed' && f.channel_id === channelId);
  }

  async openDm(botId: string): Promise<string> {
    const r = await this.spaces.call(this.account, 'POST', '/api/dms', { user_id: botId });
    if (r.status !== 200 && r.status !== 201) throw new Error(`open DM: ${r.status} ${r.text}`);
    return r.body.id;
  }

  /** An encrypted DM to the bot (the first one starts the session from the bot's bundle). */
  async sendDm(channelId: string, botId: string, text: string): Promise<string> {
    if (!this.dm) {
      const bundle = await this.spaces.ok(this.account, 'GET', `/api/keys/${botId}/bundle`);
      this.dm = createInitiatorSession(this.account.keys.identity, bundle);
    }
    const wire = encryptDm(this.dm, enc(text));
    this.sentMark = this.ws.frames.length;
    return (await this.spaces.post(this.account, channelId, JSON.stringify(wire))).id;
  }

  /** Start the DM session from a bundle fetched earlier (a prekey rotated since must still open it). */
  startDm(bundle: Parameters<typeof createInitiatorSession>[1]): void {
    this.dm = createInitiatorSession(this.account.keys.identity, bundle);
  }

  /** Forget the DM session: the next DM starts a new one from a fresh bundle. */
  resetDm(): void {
    this.dm = null;
  }

  decryptDm(ciphertext: string): string {
    return dec(decryptDm(this.dm!, JSON.parse(ciphertext)));
  }

  /** An encrypted channel message (the sender key distributed first). */
  async sendChannel(
    channelId: string,
    text: string,
    mentions: string[] = [],
    threadRoot: string | null = null,
  ): Promise<string> {
    let own = this.own.get(channelId);
    if (!own) {
      own = createSenderKey(this.account.id);
      await this.spaces.ok(
        this.account,
        'POST',
        `/api/channels/${channelId}/sender-keys`,
        { chain_id: own.chainId, distribution: senderKeyDistribution(own) },
        201,
      );
      this.own.set(channelId, own);
    }
    const wire = encryptGroup(own, enc(text));
    this.sentMark = this.ws.frames.length;
    return (
      await this.spaces.post(this.account, channelId, JSON.stringify(wire), {
        mentions,
        ...(threadRoot ? { thread_root_id: threadRoot } : {}),
      })
    ).id;
  }

  /** Decrypt another member's channel message, fetching sender keys as needed. */
  async decryptChannel(channelId: string, senderId: string, ciphertext: string): Promise<string> {
    const wire = JSON.parse(ciphertext);
    const key = `${channelId}:${senderId}:${wire.message.chain_id}`;
    if (!this.receivers.has(key)) {
      const list = await this.spaces.ok(this.account, 'GET', `/api/channels/${channelId}/sender-keys`);
      const entry = list.sender_keys.find((k: any) => k.user_id === senderId && k.chain_id === wire.message.chain_id);
      if (!entry) throw new Error('no sender key for that chain');
      this.receivers.set(key, createSenderKeyReceiver(entry.distribution));
    }
    return dec(decryptGroup(this.receivers.get(key)!, wire));
  }

  /**
   * The bot's next message in a channel: the first one since this human's last send that no
   * earlier call returned. It reads the socket's frames without consuming them (`ws.next` skips
   * every frame an earlier wait passed over, so a wait for a DM reply would swallow a channel
   * reply that arrived first). Webhook messages are never the bot's replies.
   */
  async botMessage(channelId: string, botId: string, timeoutMs = 30_000): Promise<Record<string, any>> {
    const message = await until(
      () =>
        `a message from the bot in ${channelId}; frames since the last send: ${JSON.stringify(this.ws.frames.slice(this.sentMark).map((f) => [f.type, f.channel_id, f.message?.sender_id]))}\n${this.diagnose()}`,
      async () =>
        this.ws.frames
          .slice(this.sentMark)
          .find(
            (f) =>
              f.type === 'MessageCreated' &&
              f.channel_id === channelId &&
              f.message.sender_id === botId &&
              !f.message.via_webhook &&
              !this.returned.has(f.message.id),
          )?.message,
      timeoutMs,
      25,
    );
    this.returned.add(message.id);
    return message;
  }
}

export const uniqueBotName = () => `orch_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
export { bearer };

export interface ConnectorWorld {
  s: TestServices;
  admin: Record<string, string>;
  adminKey: string;
  spaces: Spaces;
  owner: ChatAccount;
  human: Human;
  community: string;
  group: string;
  channel: string;
  profile: { id: string; slug: string };
  bot: { id: string; username: string };
  base: string;
}

/**
 * The real services (sockets), a community with a group channel, a human in it (socket
 * subscribed), a local-model profile with a snippet, and its bot connected (socket up).
 */
export async function connectorWorld(
  label: string,
  options: {
    env?: Record<string, string>;
    profile?: Record<string, unknown>;
    mode?: 'dm_only' | 'channel_mention' | 'both';
  } = {},
): Promise<ConnectorWorld> {
  const { startAgentApps } = await import('./agents.ts');
  const { registerChat, uniqueName } = await import('./chat.ts');
  const { setReplyMode } = await import('../../api/orchestration/profiles/commands.ts');
  const { orchDeps } = await import('../../main/apps.ts');
  const { s, keys } = await startAgentApps(
    label,
    {
      // The suites' humans post and fetch bundles in bursts: the chat's per-user API limit is not under test here.
      CHATSVC_API_RATE_PER_SEC: '100000',
      ORCH_INTEGRATION_ENCRYPTION_KEY: INTEGRATION_KEY,
      CHATSVC_BOOTSTRAP_SECRET: BOOTSTRAP_SECRET,
      ...options.env,
    },
    { sockets: true },
  );
  const admin = { 'X-API-Key': keys.adminKey };
  const spaces = new Spaces(s);
  const owner = await registerChat(s.chat, uniqueName('owner'));
  const community = await spaces.community(owner, 'Office');
  const group = await spaces.group(owner, community);
  const channel = await spaces.channel(owner, group, [], 'general');
  const humanAccount = await registerChat(s.chat, uniqueName('human'));
  await spaces.join(community, owner, [humanAccount]);
  await spaces.ok(humanAccount, 'POST', `/api/channels/${channel}/join`);
  const human = new Human(spaces, humanAccount);
  await human.connect();
  await human.subscribe(channel);
  const created = await http(`${s.orch}/api/v1/agent-chat/profiles`, {
    headers: admin,
    json: { slug: 'office-bot', name: 'Office Bot', model: 'local', ...options.profile },
  });
  if (created.status !== 201) throw new Error(`profile: ${created.status} ${created.text}`);
  const profile = { id: created.body.id as string, slug: 'office-bot' };
  const snippet = await http(`${s.orch}/api/v1/bots/${profile.id}/knowledge`, {
    headers: admin,
    json: { title: 'Lisbon office hours', content: 'The Lisbon office opens at half past eight and closes at six.' },
  });
  if (snippet.status !== 201) throw new Error(`snippet: ${snippet.status} ${snippet.text}`);
  await setReplyMode(orchDeps(s.platform), profile.slug, options.mode ?? 'both', {
    actor: { kind: 'system', id: 'test' },
    correlationId: null,
  });
  const base = `${s.orch}/api/v1/agents/${profile.id}/chatsvc`;
  const username = uniqueBotName();
  const r = await http(`${base}/connect`, {
    headers: admin,
    json: {
      instance_url: s.chat,
      provision_token: await provisionToken(s),
      bot_username: username,
      display_name: 'Office Bot',
      default_community_id: community,
    },
  });
  if (r.status !== 201) throw new Error(`connect: ${r.status} ${r.text}`);
  const world = {
    s,
    admin,
    adminKey: keys.adminKey,
    spaces,
    owner,
    human,
    community,
    group,
    channel,
    profile,
    bot: { id: r.body.bot_user_id as string, username },
    base,
  };
  human.diagnose = () => connectorLog(s);
  await socketUp(world);
  return world;
}

/** The connector's recent log lines (not debug): what a test prints when the bot stays silent. */
export function connectorLog(s: TestServices, lines = 30): string {
  return s.logLines
    .filter(
      (l) => (l.includes('chatsvc') || l.includes('projection') || l.includes('"error"')) && !l.includes('"debug"'),
    )
    .slice(-lines)
    .join('\n');
}

export async function socketUp(
  w: { base: string; admin: Record<string, string> },
  state = 'connected',
  timeoutMs = 15_000,
): Promise<void> {
  let text = '';
  await until(
    () => `the socket ${state} (last: ${text})`,
    async () => {
      const r = await http(w.base, { headers: w.admin });
      text = r.text;
      return r.body?.socket?.state === state;
    },
    timeoutMs,
    100,
  );
}

/**
 * Asserts the bot posted nothing in `channelId` since `mark` (a frame count of the human's
 * socket): a DM answered afterwards proves the bot handled everything before it (one frame at a
 * time, in order).
 */
export async function botStayedQuiet(w: ConnectorWorld, dm: string, channelId: string, mark: number): Promise<void> {
  await w.human.sendDm(dm, w.bot.id, 'ping, are you there?');
  await w.human.botMessage(dm, w.bot.id);
  const spoke = w.human.ws.frames
    .slice(mark)
    .filter((f) => f.type === 'MessageCreated' && f.channel_id === channelId && f.message.sender_id === w.bot.id);
  if (spoke.length) throw new Error(`the bot answered in ${channelId}`);
}
