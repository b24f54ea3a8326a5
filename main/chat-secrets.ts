// The chat service's access-token key: CHATSVC_JWT_SECRET(_FILE) when configured, else 32 random
// bytes generated on first start and kept under DATA_DIR sealed with the server key (so a copy
// of the data directory alone does not let anyone mint tokens). Every instance on the same
// DATA_DIR and server key reads the same one.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSecret, sealSecret } from '../crypto/seal.ts';
import type { ChatConfig } from '../infra/config.ts';

const CONTEXT = 'chat_jwt_secret';

export function chatJwtSecret(config: ChatConfig, sealKey: Uint8Array): string {
  if (config.jwtSecret) return config.jwtSecret;
  const file = config.jwtSecretFile;
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, sealSecret(sealKey, randomBytes(32).toString('base64url'), CONTEXT) + '\n', { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another instance wrote it first
    }
  }
  return openSecret(sealKey, readFileSync(file, 'utf8').trim(), CONTEXT);
}
