// The sockets of the ws_fanout figure, in their own process: opens `connections` sockets (the
// tokens in turn), authenticates and subscribes each to `channel`, prints {"ready": n}, counts
// MessageCreated frames, and when told on stdin how many to expect ({"expect": n}) prints
// {"delivered", "last"} once they have arrived (or after 30 s).

import WebSocket from 'ws';

const { url, tokens, channel, connections } = JSON.parse(process.argv[2]!) as {
  url: string;
  tokens: string[];
  channel: string;
  connections: number;
};
const sockets: WebSocket[] = [];
let delivered = 0;
let last = 0;
let ready = 0;

for (let i = 0; i < connections; i += 50) {
  await Promise.all(
    Array.from(
      { length: Math.min(50, connections - i) },
      (_, j) =>
        new Promise<void>((resolve) => {
          const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/api/ws`);
          sockets.push(socket);
          socket.once('open', () =>
            socket.send(JSON.stringify({ type: 'Authenticate', token: tokens[(i + j) % tokens.length] })),
          );
          socket.on('message', (data) => {
            const frame = JSON.parse(String(data)) as { type: string };
            if (frame.type === 'Authenticated') socket.send(JSON.stringify({ type: 'Subscribe', channel_id: channel }));
            else if (frame.type === 'Subscribed') {
              ready += 1;
              resolve();
            } else if (frame.type === 'MessageCreated') {
              delivered += 1;
              last = Date.now();
            }
          });
          socket.once('error', () => resolve());
          socket.once('close', () => resolve());
        }),
    ),
  );
}
process.stdout.write(JSON.stringify({ ready }) + '\n');

let input = '';
process.stdin.on('data', (chunk) => {
  input += chunk;
  const line = input.split('\n').find((l) => l.startsWith('{'));
  if (!line) return;
  const { expect } = JSON.parse(line) as { expect: number };
  const deadline = Date.now() + 30_000;
  const check = () => {
    if (delivered >= expect || Date.now() > deadline) {
      process.stdout.write(JSON.stringify({ delivered, last }) + '\n');
      for (const s of sockets) s.terminate();
      process.exit(0);
    }
    setTimeout(check, 20);
  };
  check();
});
