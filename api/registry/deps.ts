// What the registry routes may use (built by main/).

import type { CommandRunner } from '../../infra/commands.ts';
import type { Config } from '../../infra/config.ts';
import type { ServiceDeps } from '../shared/deps.ts';
import type { TokenLookup } from './auth/token-cache.ts';

export interface RegistryDeps extends ServiceDeps {
  commands: CommandRunner;
  config: Config;
  /** Keys the CSRF tokens of sessions and seals the OIDC login state cookie. */
  sealKey: Uint8Array;
  /** Machine tokens by hash (cached while this process runs their projection). */
  tokens: TokenLookup;
}
