// A response sent before its request body was read to the end (a 413 past a route's limit, a
// 401 before the body is looked at) must still reach the client. A server that stops reading
// leaves the client blocked writing, and one that closes with unread data makes its TCP stack
// answer with a reset, which can erase the response before the client has read it (RFC 9112
// §9.6, "the TCP reset problem"): Node's `fetch` (undici) lost about half its 413s to a 2.5 MB
// body that way. So once such a response is finished, the rest of the body is read and
// discarded, never kept, for a bounded size and time; a body that ends within the bound leaves
// the connection open for the next request, one that does not is closed once the bound is passed.
//
// @hono/node-server's own clean-up (`autoCleanupIncoming`) is off where this runs: it drains for
// half a second only, and cannot drain a body its web stream adapter holds paused.

import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** Bytes of an unread body discarded after the response before the connection is closed. */
export const LINGER_MAX_BYTES = 64 * 1024 * 1024;
/** Time given to the rest of an unread body after the response before the connection is closed. */
export const LINGER_MAX_MS = 5_000;

/** Read and discard the rest of `request`'s body within the bounds; past them, close the connection. */
function drainRest(request: IncomingMessage): void {
  let discarded = 0;
  const done = () => {
    clearTimeout(timer);
    request.off('data', count);
    request.off('end', done);
    request.off('error', done);
  };
  const close = () => {
    done();
    request.socket?.destroy();
  };
  const count = (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_MAX_BYTES) close();
  };
  const timer = setTimeout(close, LINGER_MAX_MS);
  timer.unref();
  // Whoever was reading the body (a web stream adapter pauses it when its queue is full) is done
  // with it: the data goes nowhere from now on but this count.
  request.removeAllListeners('data');
  request.on('data', count);
  request.on('end', done);
  request.on('error', done);
  request.resume();
}

/** Drain what a request still had unread once its response has been sent, on every request `server` answers. */
export function drainUnreadBodies(server: Server): void {
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    response.once('finish', () => {
      if (!request.complete && !request.destroyed) drainRest(request);
    });
  });
}
