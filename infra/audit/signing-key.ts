// The audit signing key: an Ed25519 seed (64 hex characters) in ORCH_AUDIT_SIGNING_KEY_FILE, or
// generated once under DATA_DIR (audit-signing.key, mode 0600) and kept there. Its public half
// is what auditors verify checkpoints with (`orchard audit public-key`).

import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { generateSigningSeedHex, signingKeyFromSeed, type SigningKey } from '../../crypto/audit.ts';
import type { Config } from '../config.ts';

export async function loadAuditSigningKey(
  config: Pick<Config, 'auditSigningKeyFile' | 'auditSigningKeyConfigured'>,
): Promise<SigningKey> {
  const file = config.auditSigningKeyFile;
  if (existsSync(file)) return signingKeyFromSeed((await readFile(file, 'utf8')).trim());
  // A file named by the operator that is not there is a mistake, not a reason to sign with a new key.
  if (config.auditSigningKeyConfigured)
    throw new Error(`ORCH_AUDIT_SIGNING_KEY_FILE names a file that does not exist: ${file}`);
  await mkdir(path.dirname(file), { recursive: true });
  const seed = generateSigningSeedHex();
  try {
    await writeFile(file, seed + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    // Another process generated it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return signingKeyFromSeed((await readFile(file, 'utf8')).trim());
    throw error;
  }
  return signingKeyFromSeed(seed);
}
