// Profiles from the composition root: the built-in personal assistant, created once at the first
// start (beside the bootstrap admin), and the operator's `orchard profiles set-reply-mode`, which
// appends the change as an operator action (actor `system`, id `operator-cli`).

import { ensurePersonalAssistant as ensure, setReplyMode } from '../api/orchestration/profiles/commands.ts';
import { REPLY_MODES, type ReplyMode } from '../domain/orchestration/profiles/events.ts';
import { DomainError } from '../domain/shared/decider.ts';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/logging.ts';
import { profileBySlug } from '../projections/orchestration/profiles.ts';
import { openPlatform, type Platform } from './platform.ts';

const profileDeps = (p: Platform) => ({ commands: p.commands, db: p.pool, clock: p.clock, config: p.config });

export async function ensurePersonalAssistant(platform: Platform): Promise<'created' | 'unchanged'> {
  const outcome = await ensure(profileDeps(platform), {
    actor: { kind: 'system', id: 'bootstrap' },
    correlationId: null,
  });
  platform.log.info('personal_assistant_profile', { outcome });
  return outcome;
}

export const SET_REPLY_MODE_USAGE = `usage: orchard profiles set-reply-mode <slug> <${REPLY_MODES.join('|')}>`;

/** `orchard profiles set-reply-mode <slug> <mode>`: 0 done (or already so), 1 no such profile, 2 usage. */
export async function setReplyModeCommand(
  config: Config,
  log: Logger,
  args: string[],
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const [slug, mode] = args;
  if (!slug || !mode || args.length !== 2 || !REPLY_MODES.includes(mode as ReplyMode)) {
    err.write(`${SET_REPLY_MODE_USAGE}\n`);
    return 2;
  }
  const platform = await openPlatform(config, log);
  try {
    if (!(await profileBySlug(platform.pool, slug))) {
      err.write(`profiles set-reply-mode: no profile with slug ${slug}\n`);
      return 1;
    }
    const changed = await setReplyMode(profileDeps(platform), slug, mode as ReplyMode, {
      actor: { kind: 'system', id: 'operator-cli' },
      correlationId: null,
    });
    out.write(
      changed ? `${slug}: channel_reply_mode is now ${mode}\n` : `${slug}: channel_reply_mode was already ${mode}\n`,
    );
    return 0;
  } catch (error) {
    if (error instanceof DomainError) {
      err.write(`profiles set-reply-mode: ${error.message}\n`);
      return 1;
    }
    throw error;
  } finally {
    await platform.close();
  }
}
