// The release public key manifests must be signed with. It is pinned here, in the code, so a
// compromised manifest host or mirror cannot substitute its own; `ORCH_UPDATER_PUBLIC_KEY_FILE`
// may replace it (a private build, the tests), and the replacement is logged at start.

import { readFileSync } from 'node:fs';
import { checkReleasePublicKey, parseKeyHex } from '../../crypto/release-signature.ts';
import type { Logger } from '../logging.ts';

export const PINNED_RELEASE_PUBLIC_KEY_HEX = '1917dd18eadc1b79e2017ffa02ba64f49272a2185687aea7f6981290a24d73b9';

export interface ReleaseKey {
  publicKey: Uint8Array;
  source: 'pinned' | string;
}

export function loadReleaseKey(publicKeyFile: string | null, log?: Logger): ReleaseKey {
  if (!publicKeyFile)
    return {
      publicKey: checkReleasePublicKey(parseKeyHex(PINNED_RELEASE_PUBLIC_KEY_HEX, 32, 'the pinned key')),
      source: 'pinned',
    };
  let text: string;
  try {
    text = readFileSync(publicKeyFile, 'utf8');
  } catch (error) {
    throw new Error(`ORCH_UPDATER_PUBLIC_KEY_FILE cannot be read: ${(error as Error).message}`);
  }
  const publicKey = checkReleasePublicKey(parseKeyHex(text, 32, 'ORCH_UPDATER_PUBLIC_KEY_FILE'));
  log?.warn('release_key_replaced', { file: publicKeyFile, key: text.trim().slice(0, 16) });
  return { publicKey, source: publicKeyFile };
}
