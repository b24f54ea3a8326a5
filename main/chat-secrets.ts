// The chat service's generated secrets. The access-token key: CHATSVC_JWT_SECRET(_FILE) when configured, else 32 random
// bytes generated on first start and kept under DATA_DIR sealed with the server key (so a copy
// of the data directory alone does not let anyone mint tokens). Every instance on the same
// DATA_DIR and server key reads the same one.

import { createECDH, randomBytes } from 'node:crypto';
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
      writeFileSync(file, sealSecret(sealKey, randomBytes(32).toString('base64url'), CONTEXT) + '\n', {
        mode: 0o600,
        flag: 'wx',
      });
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
 * public key, so it must outlive restarts). Every instance on the same DATA_DIR reads the same one;
 * instances on separate DATA_DIRs share CHATSVC_VAPID_PRIVATE_KEY instead.
 */
export function chatVapidKeys(config: ChatConfig, sealKey: Uint8Array): VapidKeys {
  if (config.push.vapidPrivateKey) return vapidKeysOf(config.push.vapidPrivateKey);
  const file = config.push.vapidFile;
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    try {
      writeFileSync(file, sealSecret(sealKey, JSON.stringify(generateVapidKeys()), VAPID_CONTEXT) + '\n', {
        mode: 0o600,
        flag: 'wx',
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error; // another instance wrote it first
    }
  }
  const keys = JSON.parse(openSecret(sealKey, readFileSync(file, 'utf8').trim(), VAPID_CONTEXT)) as VapidKeys;
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}

/** The key pair of a configured private key (the public key is derived from it). */
function vapidKeysOf(privateKey: string): VapidKeys {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(privateKey, 'base64url'));
  return {
    publicKey: ecdh.getPublicKey().toString('base64url'),
    privateKey: ecdh.getPrivateKey().toString('base64url'),
  };
}
