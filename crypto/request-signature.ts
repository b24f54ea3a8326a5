// Requests between the services and the updater sidecar are signed with a shared token:
// `X-Orchard-Signature: v1=<hex HMAC-SHA256>` over the method, path with query, timestamp, nonce
// and the body's SHA-256, so a captured request cannot be altered, and (with the receiver's
// nonce memory and time window) not replayed either. Responses are signed over the status, the
// request's nonce, their own timestamp and the body's SHA-256, so a forged or replayed answer
// fails at the client.

import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, randomBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { constantTimeEqual } from './tokens.ts';

export const SIGNATURE_VERSION = 'v1';

export interface SignedRequestParts {
  method: string;
  /** The path with its query string, as sent (`/v1/apply/x/events?after=3`). */
  pathAndQuery: string;
  timestamp: string;
  nonce: string;
  body: Uint8Array | string;
}

export interface SignedResponseParts {
  status: number;
  /** The nonce of the request answered. */
  requestNonce: string;
  timestamp: string;
  body: Uint8Array | string;
}

const bytes = (body: Uint8Array | string) => (typeof body === 'string' ? utf8ToBytes(body) : body);
export const bodyDigest = (body: Uint8Array | string) => bytesToHex(sha256(bytes(body)));

function mac(token: Uint8Array, text: string): string {
  return `${SIGNATURE_VERSION}=${bytesToHex(hmac(sha256, token, utf8ToBytes(text)))}`;
}

export function signRequest(token: Uint8Array, p: SignedRequestParts): string {
  return mac(
    token,
    `request\n${p.method.toUpperCase()}\n${p.pathAndQuery}\n${p.timestamp}\n${p.nonce}\n${bodyDigest(p.body)}`,
  );
}

export function signResponse(token: Uint8Array, p: SignedResponseParts): string {
  return mac(token, `response\n${p.status}\n${p.requestNonce}\n${p.timestamp}\n${bodyDigest(p.body)}`);
}

/** Constant-time comparison of a presented signature header with the expected one. */
export function signatureMatches(expected: string, presented: string | undefined | null): boolean {
  return !!presented && constantTimeEqual(expected, presented);
}

/** 128 random bits, hex. */
export const newNonce = () => bytesToHex(randomBytes(16));
export const NONCE_PATTERN = /^[0-9a-f]{32}$/;
