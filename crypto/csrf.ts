// The CSRF token of a session: an HMAC of the session id under the server key. It is bound to
// the session (another session's token fails) and needs no storage: recomputed to verify.

import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { constantTimeEqual } from './tokens.ts';

export function csrfTokenFor(key: Uint8Array, sessionId: string): string {
  return Buffer.from(hmac(sha256, key, utf8ToBytes(`orch_csrf:${sessionId}`))).toString('base64url');
}

export function csrfTokenValid(key: Uint8Array, sessionId: string, presented: string | undefined): boolean {
  return !!presented && constantTimeEqual(csrfTokenFor(key, sessionId), presented);
}
