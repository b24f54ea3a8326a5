// The space-asset and custom-emoji deciders, given/when/then: an asset replaces the current one
// of its kind; emoji names are unique in their community, at most EMOJI_MAX of them.

import { suite } from 'uvu';
import { EMOJI_MAX, emojiDecider, spaceAssetDecider } from '../../../domain/chat/assets/decider.ts';
import type { AssetEvent } from '../../../domain/chat/assets/events.ts';
import { spec } from '../../support/given-when-then.ts';

const at = '2026-01-01T00:00:00.000Z';
const image = { sha256: 'a'.repeat(64), mime_type: 'image/png', size: 10 };
const test = suite('domain: chat space assets and emoji');

test('Set: an asset names the one it replaces; a community has no voice background (invalid_kind)', () => {
  const asset = spec(spaceAssetDecider);
  const set = {
    ...image,
    type: 'Set' as const,
    scope: 'community' as const,
    space_id: 'k1',
    community_id: 'k1',
    kind: 'icon' as const,
    filename: 'icon-1.png',
    by: 'u1',
    at,
  };
  const { type: _type, ...data } = set;
  const first: AssetEvent = { type: 'SpaceAssetUploaded', data: { ...data, replaces: null } };
  asset([]).when(set).then([first]);
  asset([first])
    .when({ ...set, filename: 'icon-2.png' })
    .then([{ type: 'SpaceAssetUploaded', data: { ...data, filename: 'icon-2.png', replaces: 'icon-1.png' } }]);
  asset([first])
    .when({ ...set, kind: 'banner', filename: 'banner.png' })
    .then([{ type: 'SpaceAssetUploaded', data: { ...data, kind: 'banner', filename: 'banner.png', replaces: null } }]);
  asset([])
    .when({ ...set, kind: 'voice_background' })
    .thenError('invalid_kind');
  asset([])
    .when({ ...set, scope: 'group', space_id: 'g1', kind: 'voice_background' })
    .then([
      {
        type: 'SpaceAssetUploaded',
        data: { ...data, scope: 'group', space_id: 'g1', kind: 'voice_background', replaces: null },
      },
    ]);
});

test('emoji Add: a valid, unused name under the limit; Remove: an existing emoji', () => {
  const emoji = spec(emojiDecider);
  const add = (id: string, name: string) => ({
    ...image,
    type: 'Add' as const,
    emoji_id: id,
    community_id: 'k1',
    name,
    by: 'u1',
    at,
  });
  const added = (id: string, name: string): AssetEvent => ({
    type: 'EmojiAdded',
    data: { ...image, emoji_id: id, community_id: 'k1', name, by: 'u1', at },
  });
  emoji([])
    .when(add('e1', 'party'))
    .then([added('e1', 'party')]);
  for (const name of ['a', 'Party', 'with-dash', 'x'.repeat(33)])
    emoji([]).when(add('e1', name)).thenError('invalid_name');
  emoji([added('e1', 'party')])
    .when(add('e2', 'party'))
    .thenError('emoji_name_taken');
  const full = Array.from({ length: EMOJI_MAX }, (_, i) => added(`e${i}`, `emoji_${i}`));
  emoji(full).when(add('e99', 'one_more')).thenError('emoji_limit_reached');
  const removed: AssetEvent = {
    type: 'EmojiRemoved',
    data: { emoji_id: 'e1', community_id: 'k1', name: 'party', by: 'u1', at },
  };
  emoji([added('e1', 'party')])
    .when({ type: 'Remove', emoji_id: 'e1', by: 'u1', at })
    .then([removed]);
  emoji([added('e1', 'party'), removed])
    .when({ type: 'Remove', emoji_id: 'e1', by: 'u1', at })
    .thenError('emoji_not_found');
  // A removed emoji's name is free again.
  emoji([added('e1', 'party'), removed])
    .when(add('e2', 'party'))
    .then([added('e2', 'party')]);
});

test.run();
