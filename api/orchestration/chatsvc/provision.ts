// What a provision token does on the chat service (spec 1, `POST .../connect` and
// `.../communities`): list the communities a bot can join, and provision the bot (the bot, its
// token, its community, its sender keys and its end-to-end keys). Nothing here is stored: the
// connect use case (./commands.ts) stores the device and the fact once the chat side is done.

import { createSenderKey, senderKeyDistribution, type SenderKeyState } from '../../../crypto/e2ee/index.ts';
import { BOT_TOKEN } from '../../../domain/orchestration/chatsvc/rules.ts';
import type { ChatsvcClient, ChatsvcReply } from '../../../infra/chatsvc/client.ts';
import type { DeviceKeys } from '../../../infra/chatsvc/device-store.ts';
import { ApiError } from '../../shared/http-errors.ts';
import { newDevice } from './bot-keys.ts';

export interface ConnectRequest {
  instance_url: string;
  provision_token: string;
  bot_username: string;
  display_name: string;
  default_community_id?: string | undefined;
  default_community_role?: 'member' | undefined;
  expires_in_hours?: number | undefined;
  verify_tls?: boolean | undefined;
}

/** The name is a bot whose end-to-end identity this profile does not hold: it cannot speak for it. */
export const botIdentityTaken = (username: string) =>
  new ApiError(
    409,
    'bot_identity_taken',
    `the chat-service bot ${username} already registered its end-to-end keys, and this profile does not hold them ` +
      "(they were destroyed when its integration was deleted, or the bot is another integration's); choose another bot_username, or have a chat-service admin delete that bot first",
  );

/** A chat-service reply that is not what a step needed. */
export class StepFailed extends Error {
  constructor(
    readonly step: string,
    readonly reply: ChatsvcReply,
  ) {
    super(
      `${step}: the chat service answered ${reply.status}${typeof reply.body?.error === 'string' ? ` (${String(reply.body.error).slice(0, 200)})` : ''}`,
    );
  }
}

async function expect(step: string, reply: Promise<ChatsvcReply>, ok: number[] = [200, 201]): Promise<any> {
  const r = await reply;
  if (!ok.includes(r.status)) throw new StepFailed(step, r);
  return r.body;
}

/** The communities the provision token may join a bot to, as the chat service lists them. */
export async function listCommunities(provision: ChatsvcClient): Promise<unknown> {
  const r = await provision.call('GET', '/api/admin/communities');
  if (r.status !== 200) throw new StepFailed('list communities', r);
  return r.body;
}

/**
 * The chat-service side of connect: the bot, its token, its community, a sender key for every
 * member channel, and last its keys (the one step a retry could not repeat: the chat service
 * registers a bot's identity once), so a half-done connect can be retried.
 *
 * `reusable`: the bot and device keys of this profile's revoked integration. When the name
 * still belongs to that bot, the reconnect only mints a token (and joins the community if the
 * bot is not in it): same identity, sessions and sender keys. A bot of that name with keys
 * registered but not kept here (deleted, or another profile's) cannot be used: its private
 * keys are gone or not ours, and the chat service lets a bot register its identity only once.
 */
export async function provisionBot(
  provision: ChatsvcClient,
  body: ConnectRequest,
  now: Date,
  reusable: { botId: string; keys: DeviceKeys } | null,
) {
  // 1. The bot: created, or the one of that name reused (a half-done connect retried, or a revoked one reconnected).
  let botId: string | undefined;
  let reused = false;
  const created = await provision.call('POST', '/api/admin/bots', {
    username: body.bot_username,
    display_name: body.display_name,
  });
  if (created.status === 201 || created.status === 200) botId = created.body?.id;
  else if (created.status === 409) {
    for (let offset = 0; offset < 10_000 && !botId; offset += 200) {
      const list = await expect('list bots', provision.call('GET', `/api/admin/bots?limit=200&offset=${offset}`));
      const bots: { id: string; username: string; has_identity_key?: boolean }[] = list.bots ?? [];
      const found = bots.find((b) => b.username === body.bot_username);
      if (found?.has_identity_key) {
        if (found.id !== reusable?.botId) throw botIdentityTaken(body.bot_username);
        reused = true;
      }
      botId = found?.id;
      if (bots.length < 200) break;
    }
    if (!botId) throw new StepFailed('create bot (the name belongs to an account that is not a bot)', created);
  } else throw new StepFailed('create bot', created);
  if (!botId) throw new StepFailed('create bot (no id in the answer)', created);
  // 2. Its default-scope token.
  const hours = body.expires_in_hours ?? 720;
  const minted = await expect(
    'mint bot token',
    provision.call('POST', `/api/admin/bots/${botId}/tokens`, {
      scope: 'default',
      label: `orchestration:${body.bot_username}`,
      expires_in_hours: hours,
    }),
  );
  const token: string = minted?.token;
  if (typeof token !== 'string' || !BOT_TOKEN.test(token))
    throw new StepFailed('mint bot token (no token in the answer)', {
      status: 502,
      headers: new Headers(),
      body: null,
      text: '',
    });
  const expiresAt: string | null = minted.expires_at ?? new Date(now.getTime() + hours * 3_600_000).toISOString();
  // 3. The community, as member only; a reused bot already in it keeps its role (an admin raised it for send_message).
  if (body.default_community_id) {
    const member =
      reused &&
      (
        (await expect('list bot communities', provision.call('GET', `/api/admin/bots/${botId}/communities`)))
          .communities ?? []
      ).some((c: { community_id: string }) => c.community_id === body.default_community_id);
    if (!member)
      await expect(
        'join community',
        provision.call('POST', `/api/admin/bots/${botId}/communities`, {
          community_id: body.default_community_id,
          role: 'member',
        }),
        [200, 201, 204],
      );
  }
  // A reused bot keeps its keys and sender keys; its socket tops up the prekeys once connected.
  if (reused)
    return {
      botId,
      token,
      expiresAt,
      keys: reusable!.keys,
      prekeys: [],
      senderKeys: new Map<string, SenderKeyState>(),
      reused,
    };
  // 4. With the bot token: a sender key for every member channel.
  const bot = provision.withBotToken(token);
  const senderKeys = new Map<string, SenderKeyState>();
  const channels = await expect('list channels', bot.call('GET', '/api/channels'));
  for (const channel of (channels.channels ?? []) as { id: string }[]) {
    const state = createSenderKey(botId);
    await expect(
      'post sender key',
      bot.call('POST', `/api/channels/${channel.id}/sender-keys`, {
        chain_id: state.chainId,
        distribution: senderKeyDistribution(state),
      }),
      [200, 201],
    );
    senderKeys.set(channel.id, state);
  }
  // 5. Its identity, a signed prekey and 100 one-time prekeys.
  const { keys, prekeys, registration } = newDevice(botId, now);
  await expect('register keys', bot.call('POST', '/api/keys/register', registration), [200, 201]);
  return { botId, token, expiresAt, keys, prekeys, senderKeys, reused };
}
