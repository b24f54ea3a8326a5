// Gated space assets and custom emoji. A community's or group's icon, banner and (groups) voice
// background (`chat.space_assets-<space id>`): setting one replaces the current one of its kind.
// A community's custom emoji (`chat.community_emojis-<community id>`): names unique in the
// community, at most 50, decided on the one stream so that racing adds cannot pass either rule.
// The images are content-addressed blobs, named by SHA-256.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { AssetKind, AssetScope, Image, AssetEvent } from './events.ts';

export const EMOJI_MAX = 50;
export const EMOJI_NAME = /^[a-z0-9_]{2,32}$/;

export type SpaceAssetCommand = Image & {
  type: 'Set';
  scope: AssetScope;
  space_id: string;
  community_id: string;
  kind: AssetKind;
  filename: string;
  by: string;
  at: string;
};
export interface SpaceAssetState {
  current: Partial<Record<AssetKind, string>>;
}

export const spaceAssetDecider: Decider<SpaceAssetState, SpaceAssetCommand, AssetEvent> = {
  initialState: () => ({ current: {} }),
  evolve(state, event) {
    return event.type === 'SpaceAssetUploaded'
      ? { current: { ...state.current, [event.data.kind]: event.data.filename } }
      : state;
  },
  decide(command, state) {
    if (command.scope === 'community' && command.kind === 'voice_background')
      throw new DomainError('invalid', 'invalid_kind', 'communities have no voice background');
    const { type: _t, ...data } = command;
    return [{ type: 'SpaceAssetUploaded', data: { ...data, replaces: state.current[command.kind] ?? null } }];
  },
};

export type EmojiCommand =
  | (Image & { type: 'Add'; emoji_id: string; community_id: string; name: string; by: string; at: string })
  | { type: 'Remove'; emoji_id: string; by: string; at: string };
export interface EmojiState {
  community_id: string | null;
  byId: Record<string, string>;
}

export const emojiDecider: Decider<EmojiState, EmojiCommand, AssetEvent> = {
  initialState: () => ({ community_id: null, byId: {} }),
  evolve(state, event) {
    if (event.type === 'EmojiAdded')
      return { community_id: event.data.community_id, byId: { ...state.byId, [event.data.emoji_id]: event.data.name } };
    if (event.type === 'EmojiRemoved') {
      const { [event.data.emoji_id]: _gone, ...byId } = state.byId;
      return { ...state, byId };
    }
    return state;
  },
  decide(command, state) {
    if (command.type === 'Add') {
      if (!EMOJI_NAME.test(command.name))
        throw new DomainError('invalid', 'invalid_name', 'name: 2-32 of a-z, 0-9 and _');
      if (Object.values(state.byId).includes(command.name))
        throw new DomainError('conflict', 'emoji_name_taken', `an emoji named ${command.name} exists already`);
      if (Object.keys(state.byId).length >= EMOJI_MAX)
        throw new DomainError('conflict', 'emoji_limit_reached', `a community has at most ${EMOJI_MAX} custom emoji`);
      const { type: _t, ...data } = command;
      return [{ type: 'EmojiAdded', data }];
    }
    const name = state.byId[command.emoji_id];
    if (!name) throw new DomainError('not_found', 'emoji_not_found', 'no such emoji');
    return [
      {
        type: 'EmojiRemoved',
        data: { emoji_id: command.emoji_id, community_id: state.community_id!, name, by: command.by, at: command.at },
      },
    ];
  },
};
