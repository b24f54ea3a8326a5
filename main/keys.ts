// Host-side key recovery (`orchard keys ...`), run inside the server's container.
//   keys rotate <username>   interactive terminals only; prints the new key once; recorded like
//                            the HTTP rotations; refuses agent credentials and the runner.
//   keys runner-status       VERIFIED (exit 0), NOT VERIFIED (exit 3), CANNOT VERIFY (exit 4).

import { refuseRotation, rotateKey } from '../api/orchestration/users/commands.ts';
import { hashToken } from '../crypto/tokens.ts';
import { RUNNER_ID } from '../domain/orchestration/users/decider.ts';
import { runnerRefusal } from '../domain/orchestration/users/runner.ts';
import type { Config } from '../infra/config.ts';
import type { Logger } from '../infra/logging.ts';
import { apiKeyHashOf, userById, userByUsername } from '../projections/orchestration/users.ts';
import { openPlatform, type Platform } from './platform.ts';

const cliContext = { actor: { kind: 'system' as const, id: 'recovery-cli' }, correlationId: null };
const accountDeps = (p: Platform) => ({ commands: p.commands, db: p.pool, sealKey: p.sealKey, clock: p.clock });

export async function keysRotate(
  config: Config,
  log: Logger,
  username: string | undefined,
  out: NodeJS.WriteStream,
  err: NodeJS.WriteStream,
): Promise<number> {
  if (!process.stdin.isTTY) {
    err.write(
      'keys rotate: refused: standard input is not an interactive terminal (run it with a TTY, e.g. `docker compose exec orch orchard keys rotate <username>`)\n',
    );
    return 2;
  }
  if (!username) {
    err.write('usage: orchard keys rotate <username>\n');
    return 2;
  }
  const platform = await openPlatform(config, log);
  try {
    const user = await userByUsername(platform.pool, username);
    if (!user) {
      err.write(`keys rotate: no user named ${username}\n`);
      return 1;
    }
    if (user.principal_type !== 'account') {
      const reason =
        user.principal_type === 'agent' ? 'api_key_rotation_agent_credential' : 'api_key_rotation_service_principal';
      await refuseRotation(
        accountDeps(platform),
        { actor_id: null, actor_kind: 'system', target_user_id: user.id, route: 'cli', reason },
        cliContext,
      );
      err.write(
        user.principal_type === 'agent'
          ? 'keys rotate: refused: this is an agent credential; rotate it with POST /api/v1/agents/{id}/credential/rotate\n'
          : "keys rotate: refused: the runner's key comes from ORCH_RUNNER_API_KEY; change it there\n",
      );
      return 1;
    }
    const { apiKey } = await rotateKey(accountDeps(platform), user.id, 'recovery_cli', cliContext);
    out.write(`New API key for ${user.username} (shown once; the previous key no longer works):\n${apiKey}\n`);
    return 0;
  } finally {
    await platform.close();
  }
}

export async function runnerStatus(config: Config, log: Logger, out: NodeJS.WriteStream): Promise<number> {
  const say = (verdict: string, why: string, code: number) => {
    out.write(`${verdict}: ${why}\n`);
    return code;
  };
  if (!config.runnerApiKey) return say('CANNOT VERIFY', 'ORCH_RUNNER_API_KEY is not set in this environment', 4);
  const refusal = runnerRefusal(config);
  if (refusal) return say('NOT VERIFIED', `the server refuses the runner principal: ${refusal}`, 3);
  let platform: Platform;
  try {
    platform = await openPlatform(config, log, { runProjections: false });
  } catch (error) {
    return say('CANNOT VERIFY', `the database is unreachable (${(error as Error).message.split('\n')[0]})`, 4);
  }
  try {
    const runner = await userById(platform.pool, RUNNER_ID);
    if (!runner)
      return say(
        'NOT VERIFIED',
        'the runner principal is not registered; start the orchestration server with ORCH_RUNNER_API_KEY set',
        3,
      );
    if (!runner.is_active) return say('NOT VERIFIED', 'the runner principal is deactivated', 3);
    if (runner.role === 'admin') return say('NOT VERIFIED', 'the runner principal holds the admin role', 3);
    if ((await apiKeyHashOf(platform.pool, RUNNER_ID)) !== hashToken(config.runnerApiKey)) {
      return say(
        'NOT VERIFIED',
        'ORCH_RUNNER_API_KEY differs from the registered runner key; restart the server to register it',
        3,
      );
    }
    return say(
      'VERIFIED',
      'the runner principal is registered, active, not admin, and its key matches ORCH_RUNNER_API_KEY',
      0,
    );
  } catch (error) {
    return say('CANNOT VERIFY', `could not read the runner principal (${(error as Error).message})`, 4);
  } finally {
    await platform.close();
  }
}
