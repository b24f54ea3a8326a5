// Principals from configuration, registered at start: the admin account from ADMIN_API_KEY
// (created once, unchanged on a restart with the same key, rotated as an event when the key
// changed) and the runner's service principal from ORCH_RUNNER_API_KEY (same rules, refused
// while the admin key sits as a literal in the environment).

import { BOOTSTRAP_ADMIN_ID, RUNNER_ID, userDecider, userStream } from '../../../domain/orchestration/users/decider.ts';
import type { Platform } from '../../../infra/platform.ts';
import { reserve } from '../../../infra/reservations.ts';
import { runnerRefusal } from '../auth.ts';
import { keyMaterial } from './keys.ts';

type Outcome = 'created' | 'rotated' | 'unchanged';
const context = { actor: { kind: 'system' as const, id: 'bootstrap' }, correlationId: null };

async function ensure(platform: Platform, id: string, username: string, apiKey: string, type: 'EnsureBootstrapAdmin' | 'EnsureRunner'): Promise<Outcome> {
  await reserve(platform.store, 'username', username, id, context);
  const { events } = await platform.execute(userStream(id), userDecider, {
    type, key: keyMaterial(platform.sealKey, id, apiKey), at: new Date().toISOString(),
  }, context);
  return events[0]?.type === 'UserCreated' ? 'created' : events[0]?.type === 'UserApiKeyRotated' ? 'rotated' : 'unchanged';
}

export async function ensureBootstrapAdmin(platform: Platform): Promise<Outcome | 'absent'> {
  if (!platform.config.adminApiKey) return 'absent';
  const outcome = await ensure(platform, BOOTSTRAP_ADMIN_ID, 'admin', platform.config.adminApiKey, 'EnsureBootstrapAdmin');
  platform.log.info('bootstrap_admin', { outcome });
  return outcome;
}

export async function ensureRunner(platform: Platform): Promise<Outcome | 'absent' | 'refused'> {
  const { runnerApiKey } = platform.config;
  if (!runnerApiKey) return 'absent';
  const refusal = runnerRefusal(platform.config);
  if (refusal) {
    platform.log.error('runner_principal_refused', { reason: refusal });
    return 'refused';
  }
  const outcome = await ensure(platform, RUNNER_ID, 'runner', runnerApiKey, 'EnsureRunner');
  platform.log.info('runner_principal', { outcome });
  return outcome;
}
