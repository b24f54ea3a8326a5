// The MCP servers slice's application layer (the only caller of the command runner for it):
// replace the stored set, each server's `env` sealed before it reaches the log.

import { mcpServersDecider } from '../../../domain/orchestration/mcp-servers/decider.ts';
import { MCP_SERVERS_STREAM } from '../../../domain/orchestration/streams.ts';
import type { CommandContext } from '../../../infra/commands.ts';
import { listMcpServers, type McpServerRow } from '../../../projections/orchestration/mcp-servers.ts';
import type { OrchDeps } from '../deps.ts';
import { sealEnv } from './env-seal.ts';

export interface McpServerInput {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  description?: string | null;
}

/** Replace the whole set with `input` (`[]` removes all); answers the stored set. */
export async function replaceMcpServers(
  deps: Pick<OrchDeps, 'commands' | 'db' | 'clock' | 'sealKey'>,
  input: McpServerInput[],
  context: CommandContext,
): Promise<McpServerRow[]> {
  const servers = input.map((s) => ({
    name: s.name,
    command: s.command,
    args: s.args,
    env_keys: Object.keys(s.env),
    env_sealed: sealEnv(deps.sealKey, s.name, s.env),
    description: s.description ?? null,
  }));
  await deps.commands.run(
    MCP_SERVERS_STREAM,
    mcpServersDecider,
    { type: 'ReplaceMcpServers', servers, at: deps.clock.now().toISOString() },
    context,
  );
  return listMcpServers(deps.db);
}
