// A profile's canary: a marker planted in its system prompt that no honest reply contains, so a
// reply holding it is a prompt leak. An HMAC of the profile id under the server key: stable for
// the profile, unguessable without the key, and stored nowhere.

import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

export function canaryFor(key: Uint8Array, profileId: string): string {
  return `cnry-${bytesToHex(hmac(sha256, key, utf8ToBytes(`orch_canary:${profileId}`))).slice(0, 24)}`;
}
