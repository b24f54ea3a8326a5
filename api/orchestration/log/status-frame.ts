// A `/ws/live` status frame as it goes on the wire (computed in live-status.ts). A module of its
// own, importing nothing, so that the web console can `import type` it
// (web/console/src/live-status.ts) without taking the server's modules into its type-check.

export interface StatusFrame {
  type: 'status';
  at: string;
  service: { status: 'ok' | 'degraded'; version: string; database: 'ok' | 'unreachable' };
  projections: Record<string, { lag_events: number }>;
  agents_by_status: Record<string, number>;
  tasks_by_status: Record<string, number>;
  chat_turns_per_minute: number;
}
