// The console's one /ws socket (the log as it happens, filtered by the server to what this account
// may see): opened when the first page listens and closed when the last one leaves. It is
// authenticated by the session cookie (the browser sends this origin, which the server checks).
// After a drop it reconnects with `?from=` the last position it received, so no event is missed.

import { signal } from '@preact/signals';

export interface LogEvent {
  position: string;
  stream: string;
  type: string;
  data: Record<string, unknown>;
  at: string;
}

type Listener = (event: LogEvent) => void;

/** Whether the socket is open and past its `ready` frame (pages show it; tests wait for it). */
export const connected = signal(false);

const listeners = new Set<Listener>();
let socket: WebSocket | null = null;
let last: string | null = null;
let retry: ReturnType<typeof setTimeout> | null = null;
let backoff = 500;

function open(): void {
  retry = null;
  const url = new URL('/ws', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  if (last) url.searchParams.set('from', last);
  const ws = new WebSocket(url);
  socket = ws;
  ws.onmessage = (message) => {
    const frame = JSON.parse(String(message.data)) as LogEvent & { control?: string };
    if (frame.control) {
      backoff = 500;
      connected.value = true;
      return;
    }
    last = frame.position;
    for (const listener of listeners) listener(frame);
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    connected.value = false;
    socket = null;
    if (listeners.size === 0) return;
    retry = setTimeout(open, backoff);
    backoff = Math.min(backoff * 2, 10_000);
  };
}

/** Hear every event this account may see from now on; returns the way to stop. */
export function listen(listener: Listener): () => void {
  listeners.add(listener);
  if (!socket && !retry) open();
  return () => {
    listeners.delete(listener);
    if (listeners.size > 0) return;
    if (retry) clearTimeout(retry);
    retry = null;
    const ws = socket;
    socket = null;
    last = null;
    connected.value = false;
    ws?.close();
  };
}

/** The id in a stream name: `orch.task-<uuid>` → `<uuid>` for category `orch.task`. */
export function streamId(stream: string, category: string): string | null {
  return stream.startsWith(`${category}-`) ? stream.slice(category.length + 1) : null;
}
