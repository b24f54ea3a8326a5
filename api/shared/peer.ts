// The TCP peer of a request (forward-auth trust, per-address throttling). In-process requests
// (`app.request()` in tests) carry none unless the test passes one in the env.

import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

export function peerAddress(c: Context): string | undefined {
  // Checked rather than caught: an exception per in-process request costs a stack trace.
  const env = c.env as { server?: { incoming?: { socket?: unknown } }; incoming?: { socket?: unknown } } | undefined;
  if (!(env?.server ?? env)?.incoming?.socket) return undefined;
  return getConnInfo(c).remote.address;
}

export function overTls(c: Context): boolean {
  const incoming = (c.env as { incoming?: { socket?: { encrypted?: boolean } } } | undefined)?.incoming;
  return incoming?.socket?.encrypted === true;
}
