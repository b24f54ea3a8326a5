// API keys of accounts: generated here, stored in the log only as a lookup hash and a sealed copy
// (the sealed copy lets GET /api/v1/me show the key again).

import { openSecret, sealSecret } from '../../../crypto/seal.ts';
import { generateToken, hashToken } from '../../../crypto/tokens.ts';
import type { KeyMaterial } from '../../../domain/orchestration/users/decider.ts';

export const API_KEY_PREFIX = 'orch_';

const context = (userId: string) => `api_key:${userId}`;

export function keyMaterial(sealKey: Uint8Array, userId: string, apiKey: string): KeyMaterial {
  return { api_key_hash: hashToken(apiKey), api_key_sealed: sealSecret(sealKey, apiKey, context(userId)) };
}

export function newApiKey(): string {
  return generateToken(API_KEY_PREFIX);
}

export function revealApiKey(sealKey: Uint8Array, userId: string, sealed: string): string {
  return openSecret(sealKey, sealed, context(userId));
}
