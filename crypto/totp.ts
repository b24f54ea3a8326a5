// RFC 6238 TOTP as the chat service uses it (SHA-1, 30-second steps, 6 digits, one step of
// clock skew either way), over the maintained `otpauth` library. Pure: the time comes in as an
// argument, so the injected clock governs it.

import { Secret, TOTP } from 'otpauth';

const PARAMS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
export const TOTP_ISSUER = 'chatsvc';

/** A fresh 160-bit secret in base32 (what authenticator apps take). */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The `otpauth://totp/...` URI an authenticator app scans as a QR code. */
export function totpUri(secretBase32: string, accountName: string): string {
  return new TOTP({
    issuer: TOTP_ISSUER,
    label: accountName,
    secret: Secret.fromBase32(secretBase32),
    ...PARAMS,
  }).toString();
}

/** The time step `code` belongs to (within ±1 step of `nowMs`), or null when it matches none. */
export function totpStep(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const secret = Secret.fromBase32(secretBase32);
  const delta = TOTP.validate({ token: code, secret, timestamp: nowMs, window: 1, ...PARAMS });
  return delta === null ? null : TOTP.counter({ period: PARAMS.period, timestamp: nowMs }) + delta;
}

/** The code of the step at `nowMs` (tests and clients). */
export function totpCode(secretBase32: string, nowMs: number): string {
  return TOTP.generate({ secret: Secret.fromBase32(secretBase32), timestamp: nowMs, ...PARAMS });
}
