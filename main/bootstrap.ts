// Principals from configuration, registered at start: the admin account from ADMIN_API_KEY and
// the runner's service principal from ORCH_RUNNER_API_KEY (refused, with a log line, while the
// admin key sits as a literal in the environment or equals the runner's).

import { ensureConfiguredPrincipal, type ConfiguredOutcome } from '../api/orchestration/users/commands.ts';
import { runnerRefusal } from '../domain/orchestration/users/runner.ts';
import type { Platform } from './platform.ts';

const accountDeps = (p: Platform) => ({ commands: p.commands, db: p.pool, sealKey: p.sealKey, clock: p.clock });

export async function ensureBootstrapAdmin(platform: Platform): Promise<ConfiguredOutcome | 'absent'> {
  if (!platform.config.adminApiKey) return 'absent';
  const outcome = await ensureConfiguredPrincipal(accountDeps(platform), 'admin', platform.config.adminApiKey);
  platform.log.info('bootstrap_admin', { outcome });
  return outcome;
}

export async function ensureRunner(platform: Platform): Promise<ConfiguredOutcome | 'absent' | 'refused'> {
  const { runnerApiKey } = platform.config;
  if (!runnerApiKey) return 'absent';
  const refusal = runnerRefusal(platform.config);
  if (refusal) {
    platform.log.error('runner_principal_refused', { reason: refusal });
    return 'refused';
  }
  const outcome = await ensureConfiguredPrincipal(accountDeps(platform), 'runner', runnerApiKey);
  platform.log.info('runner_principal', { outcome });
  return outcome;
}
