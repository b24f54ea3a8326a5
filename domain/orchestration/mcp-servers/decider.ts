// The instance's MCP server registrations (`orch.mcp_servers-instance`), admin-only operator state:
// each PUT replaces the whole set. `env` values may be secrets, so the event carries them only
// sealed (the API seals; the runner gets them opened when it claims an agent) and their names
// in clear.

import { DomainError, type Decider } from '../../shared/decider.ts';
import type { StoredMcpServer, McpServersEvent } from './events.ts';

export type McpServersCommand = { type: 'ReplaceMcpServers'; servers: StoredMcpServer[]; at: string };

export const mcpServersDecider: Decider<{ count: number }, McpServersCommand, McpServersEvent> = {
  initialState: () => ({ count: 0 }),
  evolve: (_state, event) => ({ count: event.data.servers.length }),
  decide(command, state) {
    const names = command.servers.map((s) => s.name);
    const repeated = names.find((n, i) => names.indexOf(n) !== i);
    if (repeated !== undefined)
      throw new DomainError('invalid', 'validation_failed', `name: "${repeated}" appears more than once`);
    // Removing nothing from an empty set changes nothing.
    if (command.servers.length === 0 && state.count === 0) return [];
    return [{ type: 'McpServersReplaced', data: { servers: command.servers, at: command.at } }];
  },
};
