// Codes people type: recovery codes and TOTP backup codes. Random characters from an alphabet
// without look-alikes (no 0/O, 1/I/L), in dash-separated groups, read back case- and
// dash-insensitively. Stored only as SHA-256 hashes of the normalised form: each carries about
// 80 random bits or more, so there is nothing practical to brute-force from the hash.

import { randomInt } from 'node:crypto';
import { hashToken } from './tokens.ts';

const ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789'; // 31 symbols: log2(31) ≈ 4.95 bits each

/** `groups` groups of `size` characters, e.g. 4×5 = `ABCDE-FGHJK-MNPQR-STUVW` (≈ 99 bits). */
export function humanCode(groups: number, size: number): string {
  return Array.from({ length: groups }, () =>
    Array.from({ length: size }, () => ALPHABET[randomInt(ALPHABET.length)]).join(''),
  ).join('-');
}

export function normaliseCode(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, '');
}

export const hashCode = (code: string) => hashToken(`code:${normaliseCode(code)}`);

/** Recovery codes: 4 groups of 5 (≈ 99 bits). */
export const newRecoveryCode = () => humanCode(4, 5);
/** TOTP backup codes: 4 groups of 4 (≈ 79 bits). */
export const newBackupCode = () => humanCode(4, 4);
