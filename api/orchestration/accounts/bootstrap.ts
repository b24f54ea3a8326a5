// The admin account from ADMIN_API_KEY: created on the first start, unchanged on a restart with
// the same key, rotated (as an event) when the key changed.

import { BOOTSTRAP_ADMIN_ID, userDecider, userStream } from '../../../domain/orchestration/users/decider.ts';
import type { Platform } from '../../../infra/platform.ts';
import { reserve } from '../../../infra/reservations.ts';
import { keyMaterial } from './keys.ts';

export async function ensureBootstrapAdmin(platform: Platform): Promise<'created' | 'rotated' | 'unchanged' | 'absent'> {
  const apiKey = platform.config.adminApiKey;
  if (!apiKey) return 'absent';
  const context = { actor: { kind: 'system' as const, id: 'bootstrap' }, correlationId: null };
  await reserve(platform.store, 'username', 'admin', BOOTSTRAP_ADMIN_ID, context);
  const { events } = await platform.execute(userStream(BOOTSTRAP_ADMIN_ID), userDecider, {
    type: 'EnsureBootstrapAdmin', key: keyMaterial(platform.sealKey, BOOTSTRAP_ADMIN_ID, apiKey), at: new Date().toISOString(),
  }, context);
  const outcome = events[0]?.type === 'UserCreated' ? 'created' : events[0]?.type === 'UserApiKeyRotated' ? 'rotated' : 'unchanged';
  platform.log.info('bootstrap_admin', { outcome });
  return outcome;
}
