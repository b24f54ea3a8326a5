// The mcp-servers slice's events and stream names: the event unions, their type lists (the catalog,
// domain/events.ts, is built from them) and the stream-name functions. Its decider, its projection
// and the API import them from here.

import { eventTypes, type DomainEvent } from '../../shared/decider.ts';

export type StoredMcpServer = {
  name: string;
  command: string;
  args: string[];
  env_keys: string[];
  /** The whole `env` map as JSON, sealed. */
  env_sealed: string;
  description: string | null;
};

export type McpServersEvent = DomainEvent<'McpServersReplaced', { servers: StoredMcpServer[]; at: string }>;

export const MCP_SERVERS_EVENT_TYPES = eventTypes<McpServersEvent>()(['McpServersReplaced']);
