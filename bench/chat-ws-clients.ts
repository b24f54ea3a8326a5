// The WebSocket clients of the ws_connections figure, in their own process so that the
// server's memory is measured alone: opens `connections` sockets (the tokens in turn), sends
// Authenticate on each, prints {"authenticated": n} once every socket has answered, and holds
// them until stdin closes.

import WebSocket from 'ws';

const { url, tokens, connections } = JSON.parse(process.argv[2]!) as {
  url: string;
  tokens: string[];
  connections: number;
};
const sockets: WebSocket[] = [];
let authenticated = 0;
const BATCH = 100;

for (let i = 0; i < connections; i += BATCH) {
  await Promise.all(
    Array.from(
      { length: Math.min(BATCH, connections - i) },
      (_, j) =>
        new Promise<void>((resolve) => {
          const socket = new WebSocket(`${url.replace(/^http/, 'ws')}/api/ws`);
          sockets.push(socket);
          socket.once('open', () =>
            socket.send(JSON.stringify({ type: 'Authenticate', token: tokens[(i + j) % tokens.length] })),
          );
          socket.once('message', (data) => {
            if ((JSON.parse(String(data)) as { type: string }).type === 'Authenticated') authenticated += 1;
            resolve();
          });
          socket.once('error', () => resolve());
          socket.once('close', () => resolve());
        }),
    ),
  );
}
process.stdout.write(JSON.stringify({ authenticated }) + '\n');
process.stdin.resume();
process.stdin.once('end', () => {
  for (const s of sockets) s.terminate();
  process.exit(0);
});
