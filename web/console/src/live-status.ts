// The console's one /ws/live socket (status frames, every 2 seconds: health, projection lag,
// agents and tasks by status, chat turns per minute), like live.ts for /ws: opened when the first
// page watches and closed when the last one leaves, authenticated by the session cookie (the
// browser sends this origin, which the server checks), reopened after a drop. The frames are
// snapshots, so nothing needs replaying: the next frame is the whole state again.

import { signal } from '@preact/signals';
import type { StatusFrame } from '../../../api/orchestration/log/status-frame.ts';

/** A status frame as the server sends it. */
export type { StatusFrame };

/** The latest frame (null before the first one, and after the last watcher leaves). */
export const liveStatus = signal<StatusFrame | null>(null);
/** Whether the socket is open now (a stale frame stays shown while it reconnects). */
export const liveStatusOpen = signal(false);

let watchers = 0;
let socket: WebSocket | null = null;
let retry: ReturnType<typeof setTimeout> | null = null;
let backoff = 500;

function open(): void {
  retry = null;
  const url = new URL('/ws/live', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = new WebSocket(url);
  socket = ws;
  ws.onopen = () => {
    backoff = 500;
    liveStatusOpen.value = true;
  };
  ws.onmessage = (message) => {
    const frame = JSON.parse(String(message.data)) as StatusFrame;
    if (frame.type === 'status') liveStatus.value = frame;
  };
  ws.onclose = () => {
    if (socket !== ws) return;
    liveStatusOpen.value = false;
    socket = null;
    if (watchers === 0) return;
    retry = setTimeout(open, backoff);
    backoff = Math.min(backoff * 2, 10_000);
  };
}

/** Keep the status frames coming (into `liveStatus`) until the returned function is called. */
export function watchStatus(): () => void {
  watchers++;
  if (!socket && !retry) open();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    if (--watchers > 0) return;
    if (retry) clearTimeout(retry);
    retry = null;
    const ws = socket;
    socket = null;
    liveStatus.value = null;
    liveStatusOpen.value = false;
    ws?.close();
  };
}
