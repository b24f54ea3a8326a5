// The chat service's generated secrets. The access-token key: CHATSVC_JWT_SECRET(_FILE) when configured, else 32 random
// bytes generated on first start and kept under DATA_DIR sealed with the server key (so a copy
// of the data directory alone does not let anyone mint tokens). Every instance on the same
// DATA_DIR and server key reads the same one.

import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openSecret, sealSecret } from '../crypto/seal.ts';
import type { ChatConfig } from '../infra/config.ts';
import { generateVapidKeys, type VapidKeys } from '../infra/push/web-push.ts';

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

const VAPID_CONTEXT = 'chat_vapid_keys';

/**
 * The web-push VAPID key pair: made once by web-push on first start and kept under DATA_DIR
 * sealed with the server key (the private key signs every push; subscriptions are bound to the
 * public key, so it must outlive restarts). Every instance on the same DATA_DIR reads the same one.
 */
export function chatVapidKeys(config: ChatConfig, sealKey: Uint8Array): VapidKeys {
  const file = config.push.vapidFile;
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, sealSecret(sealKey, JSON.stringify(generateVapidKeys()), VAPID_CONTEXT) + '\n', { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another instance wrote it first
    }
  }
  const keys = JSON.parse(openSecret(sealKey, readFileSync(file, 'utf8').trim(), VAPID_CONTEXT)) as VapidKeys;
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}
