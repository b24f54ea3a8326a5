// The shared HMAC token of the sidecar's API: a file of at least 32 bytes (surrounding
// whitespace ignored), read by the sidecar and by the services that call it.

import { readFileSync } from 'node:fs';

export const MIN_TOKEN_BYTES = 32;

export function readSidecarToken(file: string | null, variable: string): Uint8Array {
  if (!file) throw new Error(`${variable} is not set`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new Error(
      `${variable} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  const token = new TextEncoder().encode(text);
  if (token.length < MIN_TOKEN_BYTES)
    throw new Error(`${variable} holds ${token.length} bytes; the token needs at least ${MIN_TOKEN_BYTES}`);
  return token;
}
