// The chat service's blob sweep: hourly (and once shortly after start), blobs no live file,
// current asset or emoji refers to, untouched for 24 hours, are removed; so are temp files an
// interrupted process left behind. Link-preview images, which no record refers to, go once
// unused (neither fetched by a preview nor served) for a week (api/chat/link-preview/routes.ts).

import { PREVIEW_IMAGE_UNUSED_MS, previewImageStore } from '../api/chat/link-preview/routes.ts';
import { FilesystemBlobStore } from '../infra/files/store.ts';
import { blobReferenced } from '../projections/chat/files.ts';
import type { Platform } from './platform.ts';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

/** One pass over both stores, on the platform's clock; the blobs and images removed. */
export async function sweepChatFiles(platform: Platform): Promise<{ blobs: string[]; previewImages: string[] }> {
  const dir = platform.config.chat.files.dir;
  const blobs = await new FilesystemBlobStore(dir).sweep(platform.clock.now(), (sha256) =>
    blobReferenced(platform.pool, sha256),
  );
  const previewImages = await previewImageStore(dir).sweep(
    platform.clock.now(),
    async () => false,
    PREVIEW_IMAGE_UNUSED_MS,
  );
  return { blobs, previewImages };
}

export function startFileSweeper(platform: Platform): () => void {
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const removed = await sweepChatFiles(platform);
      if (removed.blobs.length) platform.log.info('chat_blobs_swept', { removed: removed.blobs.length });
      if (removed.previewImages.length)
        platform.log.info('chat_preview_images_swept', { removed: removed.previewImages.length });
    } catch (error) {
      platform.log.warn('chat_blob_sweep_failed', { error: (error as Error).message });
    } finally {
      running = false;
    }
  };
  // Not awaited by the timers: `sweep` catches and logs its own failure (chat_blob_sweep_failed).
  const first = setTimeout(() => void sweep(), 60_000);
  const timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
