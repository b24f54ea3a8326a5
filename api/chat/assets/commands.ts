// Assets' use cases: set a community's icon or banner (its owners and admins), a group's icon,
// banner or voice background (the group owner or a community admin), add a custom emoji and
// remove one (community owners and admins). The slice's application layer and the only caller of
// the command runner for these routes: each finds the space and whether the caller manages it,
// then receives the image (the route reads the multipart body, after the check, so a refused
// caller's upload is never read), commits its blob and runs the decider.

import { randomUUID } from 'node:crypto';
import { emojiDecider, EMOJI_NAME, spaceAssetDecider } from '../../../domain/chat/assets/decider.ts';
import type { AssetKind, AssetScope } from '../../../domain/chat/assets/events.ts';
import { emojiStream, spaceAssetStream } from '../../../domain/chat/streams.ts';
import { atLeast } from '../../../domain/chat/communities/roles.ts';
import { managesGroup } from '../../../domain/chat/groups/decider.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import type { Pool } from '../../../infra/db/pool.ts';
import type { Received } from '../../../infra/files/store.ts';
import { assetByFilename, emojiById, type AssetRow, type EmojiRow } from '../../../projections/chat/assets.ts';
import { communityFor, groupFor } from '../access.ts';
import type { ChatDeps } from '../deps.ts';
import { asCoded } from '../files/commands.ts';
import { coded } from '../files/upload.ts';

export type Deps = Pick<ChatDeps, 'commands' | 'db' | 'clock' | 'files'>;

/** An uploaded raster image, received into the blob store (not committed yet), and the upload's text fields. */
export interface Image {
  file: Received;
  mime: string;
  ext: string;
  fields: Record<string, string>;
}
/** Reads the request's image: called once the caller may set it. */
export type ReceiveImage = () => Promise<Image>;

/** The community, for its owners and admins (403 `insufficient_role` for other members). */
async function managedCommunity(db: Pool, communityId: string, userId: string) {
  const access = await communityFor(db, communityId, userId);
  if (!atLeast(access.role, 'admin')) throw coded(403, 'insufficient_role', 'this needs a community owner or admin');
  return access;
}

async function setAsset(
  deps: Deps,
  space: { scope: AssetScope; space_id: string; community_id: string },
  kind: AssetKind,
  userId: string,
  receive: ReceiveImage,
  context: CommandContext,
): Promise<AssetRow> {
  const { file, mime, ext } = await receive();
  await deps.files.commit(file);
  const filename = `${randomUUID()}.${ext}`;
  try {
    await deps.commands.run(
      spaceAssetStream(space.space_id),
      spaceAssetDecider,
      {
        type: 'Set',
        scope: space.scope,
        space_id: space.space_id,
        community_id: space.community_id,
        kind,
        filename,
        sha256: file.sha256,
        mime_type: mime,
        size: file.size,
        by: userId,
        at: deps.clock.now().toISOString(),
      },
      context,
    );
  } catch (error) {
    throw asCoded(error);
  }
  return (await assetByFilename(deps.db, space.scope, filename))!;
}

/** Sets the community's icon or banner (owners and admins); the previous one of its kind is replaced. */
export async function setCommunityAsset(
  deps: Deps,
  input: { community_id: string; user_id: string; kind: 'icon' | 'banner' },
  receive: ReceiveImage,
  context: CommandContext,
): Promise<AssetRow> {
  const access = await managedCommunity(deps.db, input.community_id, input.user_id);
  const id = access.community.id;
  return setAsset(
    deps,
    { scope: 'community', space_id: id, community_id: id },
    input.kind,
    input.user_id,
    receive,
    context,
  );
}

/** Sets the group's icon, banner or voice background (the group owner or a community admin). */
export async function setGroupAsset(
  deps: Deps,
  input: { group_id: string; user_id: string; kind: AssetKind },
  receive: ReceiveImage,
  context: CommandContext,
): Promise<AssetRow> {
  const access = await groupFor(deps.db, input.group_id, input.user_id);
  if (!managesGroup(access.group, input.user_id, access.community_role))
    throw coded(403, 'insufficient_role', 'this needs the group owner or a community admin');
  return setAsset(
    deps,
    { scope: 'group', space_id: access.group.id, community_id: access.group.community_id },
    input.kind,
    input.user_id,
    receive,
    context,
  );
}

/** Adds a custom emoji (owners and admins): the image and its `name` field (400 for a bad name, the image discarded). */
export async function addEmoji(
  deps: Deps,
  input: { community_id: string; user_id: string },
  receive: ReceiveImage,
  context: CommandContext,
): Promise<EmojiRow> {
  const access = await managedCommunity(deps.db, input.community_id, input.user_id);
  const { file, mime, fields } = await receive();
  const name = fields.name ?? '';
  if (!EMOJI_NAME.test(name)) {
    await deps.files.discard(file);
    throw coded(400, 'validation_failed', 'name: 2-32 characters of a-z, 0-9 and _');
  }
  await deps.files.commit(file);
  const id = randomUUID();
  try {
    await deps.commands.run(
      emojiStream(access.community.id),
      emojiDecider,
      {
        type: 'Add',
        emoji_id: id,
        community_id: access.community.id,
        name,
        sha256: file.sha256,
        mime_type: mime,
        size: file.size,
        by: input.user_id,
        at: deps.clock.now().toISOString(),
      },
      context,
    );
  } catch (error) {
    throw asCoded(error);
  }
  return (await emojiById(deps.db, id))!;
}

/** Removes a custom emoji (owners and admins; 404 `emoji_not_found` for one of another community). */
export async function removeEmoji(
  deps: Deps,
  input: { community_id: string; emoji_id: string; user_id: string },
  context: CommandContext,
): Promise<void> {
  const access = await managedCommunity(deps.db, input.community_id, input.user_id);
  const row = await emojiById(deps.db, input.emoji_id);
  if (!row || row.community_id !== access.community.id) throw coded(404, 'emoji_not_found', 'no such emoji');
  try {
    await deps.commands.run(
      emojiStream(access.community.id),
      emojiDecider,
      { type: 'Remove', emoji_id: input.emoji_id, by: input.user_id, at: deps.clock.now().toISOString() },
      context,
    );
  } catch (error) {
    throw asCoded(error);
  }
}
