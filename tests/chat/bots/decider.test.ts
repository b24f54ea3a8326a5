// The bot token decider (`chat.bot_token-<uuid>`), given/when/then: minted once with a valid
// rate limit, revoked once, and only for the bot it belongs to.

import { suite } from 'uvu';
import { botTokenDecider } from '../../../domain/chat/bots/decider.ts';
import type { BotTokenEvent } from '../../../domain/chat/bots/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const mint = {
  type: 'Mint' as const,
  token_id: 't1',
  bot_id: 'b1',
  token_hash: 'hash',
  prefix: 'cb_00000000',
  scope: 'default' as const,
  label: null,
  expires_at: null,
  rate_limit_per_window: null,
  created_by: 'admin',
  at,
};
const { type: _type, ...mintedData } = mint;
const minted: BotTokenEvent = { type: 'BotTokenMinted', data: mintedData };
const revoked: BotTokenEvent = { type: 'BotTokenRevoked', data: { token_id: 't1', bot_id: 'b1', by: 'admin', at } };
const token = spec(botTokenDecider);
const test = suite('domain: chat bot tokens');

test('Mint: a new token; token_exists on a minted stream; invalid_rate_limit unless a positive integer', () => {
  token([]).when(mint).then([minted]);
  token([])
    .when({ ...mint, rate_limit_per_window: 5 })
    .then([{ type: 'BotTokenMinted', data: { ...mintedData, rate_limit_per_window: 5 } }]);
  token([minted]).when(mint).thenError('token_exists');
  for (const bad of [0, -1, 1.5])
    token([])
      .when({ ...mint, rate_limit_per_window: bad })
      .thenError('invalid_rate_limit');
});

test('Revoke: once (again appends nothing); token_not_found for an unknown token or another bot', () => {
  token([minted]).when({ type: 'Revoke', bot_id: 'b1', by: 'admin', at }).then([revoked]);
  token([minted, revoked]).when({ type: 'Revoke', bot_id: 'b1', by: 'admin', at }).then([]);
  token([minted]).when({ type: 'Revoke', bot_id: 'b2', by: 'admin', at }).thenError('token_not_found');
  token([]).when({ type: 'Revoke', bot_id: 'b1', by: 'admin', at }).thenError('token_not_found');
});

test.run();
