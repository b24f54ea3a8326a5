// A release manifest's payload and the checks a verified signature still has to pass. Pure:
// the caller verifies the signature (crypto/release-signature.ts) and passes the clock and the
// channel's highest verified version.
//
// Refusal codes: `manifest_signature_invalid`, `manifest_channel_mismatch`, `manifest_expired`
// (a freeze attack: a mirror replaying an old, validly signed manifest), `manifest_rollback`
// (older than the highest version this channel has verified) and `manifest_malformed`.

import semver from 'semver';

export const MANIFEST_MAX_BYTES = 64 * 1024;
export const CHANNELS = ['canary', 'beta', 'stable'] as const;

export type RequirementKind = 'env' | 'secret_file' | 'compose_service' | 'installer';
export const REQUIREMENT_KINDS: readonly RequirementKind[] = ['env', 'secret_file', 'compose_service', 'installer'];

export interface Requirement {
  id: string;
  kind: RequirementKind;
  /** The variable, file path, compose service or installer step that must be present. */
  target: string;
  /** What an operator does when it is missing. */
  action: string;
}

export interface Manifest {
  schema: 1;
  channel: string;
  version: string;
  expires_at: string;
  image: { repository: string; digest: string };
  artifact: { url: string; sha256: string };
  /** The release's migrations in order; the last one is what `/api/v1/health/db` must report. */
  migrations: string[];
  requirements: Requirement[];
}

export type ManifestRefusalCode =
  | 'manifest_signature_invalid'
  | 'manifest_channel_mismatch'
  | 'manifest_expired'
  | 'manifest_rollback'
  | 'manifest_malformed';

export class ManifestRefusal extends Error {
  constructor(
    readonly code: ManifestRefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'ManifestRefusal';
  }
}

const malformed = (message: string) => new ManifestRefusal('manifest_malformed', message);
const DIGEST = /^sha256:[0-9a-f]{64}$/;
const SHA256 = /^[0-9a-f]{64}$/;

function text(value: unknown, field: string, max = 1024): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw malformed(`${field} must be a non-empty string of at most ${max} characters`);
  return value;
}

function object(value: unknown, field: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw malformed(`${field} must be an object`);
  return value as Record<string, unknown>;
}

/** The payload's bytes as a Manifest, or `manifest_malformed` naming the first bad field. */
export function parseManifest(payload: Uint8Array): Manifest {
  if (payload.length > MANIFEST_MAX_BYTES) throw malformed(`the manifest is larger than ${MANIFEST_MAX_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch {
    throw malformed('the payload is not UTF-8 JSON');
  }
  const m = object(value, 'manifest');
  if (m.schema !== 1) throw malformed('schema must be 1');
  const channel = text(m.channel, 'channel', 64);
  const version = text(m.version, 'version', 128);
  if (!semver.valid(version) || semver.clean(version) !== version)
    throw malformed('version must be a semantic version (1.2.3)');
  const expires = text(m.expires_at, 'expires_at', 64);
  if (Number.isNaN(Date.parse(expires))) throw malformed('expires_at must be an ISO 8601 time');
  const image = object(m.image, 'image');
  const digest = text(image.digest, 'image.digest', 80);
  if (!DIGEST.test(digest)) throw malformed('image.digest must be sha256:<64 hex>');
  const artifact = object(m.artifact, 'artifact');
  const sha256 = text(artifact.sha256, 'artifact.sha256', 64);
  if (!SHA256.test(sha256)) throw malformed('artifact.sha256 must be 64 lowercase hex characters');
  const url = text(artifact.url, 'artifact.url', 2048);
  if (!/^https?:\/\//.test(url)) throw malformed('artifact.url must be an http(s) URL');
  if (!Array.isArray(m.migrations) || m.migrations.length > 10_000) throw malformed('migrations must be an array');
  const migrations = m.migrations.map((name, i) => text(name, `migrations[${i}]`, 200));
  if (!Array.isArray(m.requirements) || m.requirements.length > 200)
    throw malformed('requirements must be an array of at most 200');
  const ids = new Set<string>();
  const requirements = m.requirements.map((r, i): Requirement => {
    const o = object(r, `requirements[${i}]`);
    const id = text(o.id, `requirements[${i}].id`, 200);
    if (ids.has(id)) throw malformed(`requirements[${i}].id repeats ${id}`);
    ids.add(id);
    if (!REQUIREMENT_KINDS.includes(o.kind as RequirementKind))
      throw malformed(`requirements[${i}].kind must be one of ${REQUIREMENT_KINDS.join(', ')}`);
    return {
      id,
      kind: o.kind as RequirementKind,
      target: text(o.target, `requirements[${i}].target`),
      action: text(o.action, `requirements[${i}].action`, 2000),
    };
  });
  return {
    schema: 1,
    channel,
    version,
    expires_at: expires,
    image: { repository: text(image.repository, 'image.repository', 512), digest },
    artifact: { url, sha256 },
    migrations,
    requirements,
  };
}

export interface ManifestExpectations {
  channel: string;
  now: Date;
  /** The highest version this channel has verified before; null when none. */
  highestVerified: string | null;
}

/** Channel, freshness and monotonicity, in that order (the first failing check names the refusal). */
export function checkManifest(manifest: Manifest, expect: ManifestExpectations): Manifest {
  if (manifest.channel !== expect.channel) {
    throw new ManifestRefusal(
      'manifest_channel_mismatch',
      `the manifest is for channel ${manifest.channel}, not ${expect.channel}`,
    );
  }
  if (Date.parse(manifest.expires_at) <= expect.now.getTime()) {
    throw new ManifestRefusal('manifest_expired', `the manifest expired at ${manifest.expires_at}`);
  }
  if (expect.highestVerified && semver.lt(manifest.version, expect.highestVerified)) {
    throw new ManifestRefusal(
      'manifest_rollback',
      `version ${manifest.version} is older than ${expect.highestVerified}, which this channel has already verified`,
    );
  }
  return manifest;
}

export const compareVersions = (a: string, b: string): number => semver.compare(a, b);
export const isNewer = (candidate: string, current: string): boolean =>
  semver.valid(candidate) !== null && semver.valid(current) !== null && semver.gt(candidate, current);
export const higherOf = (a: string | null, b: string): string => (a && semver.valid(a) && semver.gte(a, b) ? a : b);
