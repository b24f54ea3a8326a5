// The stored MCP server set, in the order it was sent. `env` values stay sealed here too.

import type { McpServersEvent } from '../../domain/orchestration/mcp-servers/events.ts';
import type { Pool } from '../../infra/db/pool.ts';
import { defineProjection } from '../../infra/processors/projection.ts';

export const mcpServersProjection = defineProjection<McpServersEvent>({
  name: 'mcp_servers',
  handles: ['McpServersReplaced'],
  tables: ['mcp_servers'],
  async apply(event, tx) {
    await tx.query('DELETE FROM mcp_servers');
    for (const [position, s] of event.data.servers.entries()) {
      await tx.query(
        'INSERT INTO mcp_servers (position, name, command, args, env_keys, env_sealed, description) VALUES ($1, $2, $3, $4, $5, $6, $7)',
        [position, s.name, s.command, JSON.stringify(s.args), JSON.stringify(s.env_keys), s.env_sealed, s.description],
      );
    }
  },
});

export interface McpServerRow {
  name: string;
  command: string;
  args: string[];
  env_keys: string[];
  env_sealed: string;
  description: string | null;
}

export async function listMcpServers(pool: Pool): Promise<McpServerRow[]> {
  const { rows } = await pool.query<McpServerRow>(
    'SELECT name, command, args, env_keys, env_sealed, description FROM mcp_servers ORDER BY position',
  );
  return rows;
}
