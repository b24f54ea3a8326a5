// The TCP peer of a request (forward-auth trust, per-address throttling). In-process requests
// (`app.request()` in tests) carry none unless the test passes one in the env.

import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';

export function peerAddress(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

export function overTls(c: Context): boolean {
  const incoming = (c.env as { incoming?: { socket?: { encrypted?: boolean } } } | undefined)?.incoming;
  return incoming?.socket?.encrypted === true;
}
