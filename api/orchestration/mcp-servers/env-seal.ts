// A server's `env` is sealed in the log under a context naming the server, so a sealed value
// cannot be replayed as another server's; the runner gets it opened when it claims an agent.

import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import type { McpServerRow } from '../../../projections/orchestration/mcp-servers.ts';

const envContext = (name: string) => `mcp_env:${name}`;

export const sealEnv = (sealKey: Uint8Array, name: string, env: Record<string, string>) =>
  sealSecret(sealKey, JSON.stringify(env), envContext(name));

/** A stored server with its `env` opened: what the runner gets. */
export function openMcpServer(sealKey: Uint8Array, row: McpServerRow) {
  return {
    name: row.name,
    command: row.command,
    args: row.args,
    env: JSON.parse(openSecret(sealKey, row.env_sealed, envContext(row.name))) as Record<string, string>,
    description: row.description,
  };
}
