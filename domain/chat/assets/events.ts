// The assets slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export const ASSET_KINDS = ['icon', 'banner', 'voice_background'] as const;

export type AssetKind = (typeof ASSET_KINDS)[number];

export type AssetScope = 'community' | 'group';

export type Image = { sha256: string; mime_type: string; size: number };

export type AssetEvent =
  | DomainEvent<
      'SpaceAssetUploaded',
      Image & {
        scope: AssetScope;
        space_id: string;
        community_id: string;
        kind: AssetKind;
        filename: string;
        replaces: string | null;
        by: string;
        at: string;
      }
    >
  | DomainEvent<'EmojiAdded', Image & { emoji_id: string; community_id: string; name: string; by: string; at: string }>
  | DomainEvent<'EmojiRemoved', { emoji_id: string; community_id: string; name: string; by: string; at: string }>;

export const ASSET_EVENT_TYPES = eventTypes<AssetEvent>()(['SpaceAssetUploaded', 'EmojiAdded', 'EmojiRemoved']);
