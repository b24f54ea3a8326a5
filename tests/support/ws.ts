// A WebSocket test client (the `ws` package): frames are collected as they arrive, and a test
// waits for the next one matching what it expects, or for the close.

import WebSocket from 'ws';

export interface WsClient {
  frames: Record<string, any>[];
  send(frame: unknown): void;
  next(match?: (frame: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
  /** The `ws` socket itself (pause/resume to play a slow consumer). */
  socket: WebSocket;
}

/** The last frames, each cut short: a failure message stays readable (frames can be megabytes). */
function describe(frames: Record<string, any>[]): string {
  const last = frames.slice(-8).map((f) => {
    const text = JSON.stringify(f);
    return text.length > 400 ? `${text.slice(0, 400)}…(${text.length} chars)` : text;
  });
  return `${frames.length} frames, the last: ${last.join(' ')}`;
}

export async function connectWs(
  base: string,
  path = '/api/ws',
  headers: Record<string, string> = {},
): Promise<WsClient> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}${path}`, { headers });
  const frames: Record<string, any>[] = [];
  let taken = 0;
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    frames.push(JSON.parse(String(data)));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => {
      resolve({ code, reason: String(reason) });
      for (const w of waiters.splice(0)) w();
    }),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    frames,
    send: (frame) => socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    async next(match = () => true, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        while (taken < frames.length) {
          const frame = frames[taken++]!;
          if (match(frame)) return frame;
        }
        if (socket.readyState === WebSocket.CLOSED) throw new Error(`socket closed; ${describe(frames)}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; ${describe(frames)}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
    },
    closed,
    close: () => socket.close(),
    socket,
  };
}

/** The HTTP status of an upgrade the server refuses (101 when it accepts). */
export function upgradeStatus(base: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}${path}`, { headers });
    socket.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      socket.terminate();
    });
    socket.once('open', () => {
      resolve(101);
      socket.close();
    });
    socket.once('error', (error) => reject(error));
  });
}
