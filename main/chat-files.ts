// The chat service's blob sweep: hourly (and once shortly after start), blobs no live file,
// current asset or emoji refers to, untouched for 24 hours, are removed; so are temp files an
// interrupted process left behind.

import { FilesystemBlobStore } from '../infra/files/store.ts';
import { blobReferenced } from '../projections/chat/files.ts';
import type { Platform } from './platform.ts';

const SWEEP_EVERY_MS = 60 * 60 * 1000;

export function startFileSweeper(platform: Platform): () => void {
  const store = new FilesystemBlobStore(platform.config.chat.files.dir);
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const removed = await store.sweep(platform.clock.now(), (sha256) => blobReferenced(platform.pool, sha256));
      if (removed.length) platform.log.info('chat_blobs_swept', { removed: removed.length });
    } catch (error) {
      platform.log.warn('chat_blob_sweep_failed', { error: (error as Error).message });
    } finally {
      running = false;
    }
  };
  const first = setTimeout(sweep, 60_000);
  const timer = setInterval(sweep, SWEEP_EVERY_MS);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
