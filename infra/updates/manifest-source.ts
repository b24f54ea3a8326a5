// Fetching and verifying a channel's manifest: `<host>/channels/<channel>.json`, a DSSE
// envelope of at most 64 KiB. An empty channel (404) is not an error: it has no release yet.

import { parseEnvelope, SignatureError, verifyEnvelope, type DsseEnvelope } from '../../crypto/release-signature.ts';
import {
  checkManifest,
  MANIFEST_MAX_BYTES,
  ManifestRefusal,
  parseManifest,
  type Manifest,
  type ManifestExpectations,
} from '../../domain/updates/manifest.ts';

/** An envelope is its payload in base64 plus a signature: allow for the encoding. */
const ENVELOPE_MAX_BYTES = Math.ceil((MANIFEST_MAX_BYTES * 4) / 3) + 4096;

/** Signature, then payload shape, then channel, freshness and monotonicity. */
export function verifyManifestEnvelope(value: unknown, publicKey: Uint8Array, expect: ManifestExpectations): Manifest {
  let payload: Uint8Array;
  try {
    payload = verifyEnvelope(parseEnvelope(value), publicKey);
  } catch (error) {
    if (error instanceof SignatureError && error.code === 'malformed')
      throw new ManifestRefusal('manifest_malformed', error.message);
    if (error instanceof SignatureError) throw new ManifestRefusal('manifest_signature_invalid', error.message);
    throw error;
  }
  return checkManifest(parseManifest(payload), expect);
}

export type FetchResult = { kind: 'empty' } | { kind: 'envelope'; envelope: DsseEnvelope | unknown };

export class ManifestFetchError extends Error {
  readonly code = 'manifest_unreachable';
}

export const manifestUrl = (host: string, channel: string) => `${host}/channels/${encodeURIComponent(channel)}.json`;

/** GET the channel's envelope; the body is read up to the limit and refused past it. */
export async function fetchManifest(host: string, channel: string, timeoutMs = 10_000): Promise<FetchResult> {
  let res: Response;
  try {
    res = await fetch(manifestUrl(host, channel), { signal: AbortSignal.timeout(timeoutMs), redirect: 'error' });
  } catch (error) {
    throw new ManifestFetchError(`the manifest host cannot be reached: ${(error as Error).message}`);
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return { kind: 'empty' };
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new ManifestFetchError(`the manifest host answered ${res.status}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > ENVELOPE_MAX_BYTES)
      throw new ManifestRefusal('manifest_malformed', `the manifest is larger than ${MANIFEST_MAX_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return { kind: 'envelope', envelope: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    throw new ManifestRefusal('manifest_malformed', 'the envelope is not JSON');
  }
}
