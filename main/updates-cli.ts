// CLI commands of managed updates:
//   release keygen <path prefix>          write <prefix>.key (secret seed, hex, 0600) and <prefix>.pub
//   release sign <key file> <payload>     print the DSSE envelope of the payload file's exact bytes
//   release bundle <build dir>            precompile a release's sources into <dir>/dist/
//   updates unfreeze <apply_id>           after repairing by hand: lift a frozen apply's maintenance
//   serve sidecar [--enable-failpoints]   (in cli.ts) the updater sidecar

import { readFile, writeFile } from 'node:fs/promises';
import { generateReleaseKeyPair, parseKeyHex, signEnvelope } from '../crypto/release-signature.ts';
import type { Config } from '../infra/config.ts';
import { SidecarClient, SidecarUnavailable } from '../infra/updates/sidecar-client.ts';

export const RELEASE_USAGE = `usage: orchard release keygen <path prefix>
       orchard release sign <secret key file> <payload file>
       orchard release bundle <release build directory>`;
export const UPDATES_USAGE = 'usage: orchard updates unfreeze <apply_id>';

type Out = { write(text: string): unknown };

export async function releaseCommand(args: string[], stdout: Out, stderr: Out): Promise<number> {
  const [verb, ...rest] = args;
  if (verb === 'keygen' && rest.length === 1) {
    const { secretKeyHex, publicKeyHex } = generateReleaseKeyPair();
    await writeFile(`${rest[0]}.key`, secretKeyHex + '\n', { mode: 0o600, flag: 'wx' });
    await writeFile(`${rest[0]}.pub`, publicKeyHex + '\n', { mode: 0o644, flag: 'wx' });
    stdout.write(
      JSON.stringify({
        public_key: publicKeyHex,
        secret_key_file: `${rest[0]}.key`,
        public_key_file: `${rest[0]}.pub`,
      }) + '\n',
    );
    return 0;
  }
  if (verb === 'sign' && rest.length === 2) {
    let secret: Uint8Array;
    try {
      secret = parseKeyHex(await readFile(rest[0]!, 'utf8'), 32, 'the secret key file');
    } catch (error) {
      stderr.write(`orchard: ${(error as Error).message}\n`);
      return 2;
    }
    // The payload's exact bytes are signed: no parsing, no canonicalisation.
    const payload = new Uint8Array(await readFile(rest[1]!));
    stdout.write(JSON.stringify(signEnvelope(payload, secret)) + '\n');
    return 0;
  }
  if (verb === 'bundle' && rest.length === 1) {
    const { bundleRelease, BundleRefused } = await import('./release-bundle.ts');
    try {
      const { outdir, files } = await bundleRelease(rest[0]!);
      stdout.write(JSON.stringify({ outdir, files }) + '\n');
      return 0;
    } catch (error) {
      if (!(error instanceof BundleRefused)) throw error;
      stderr.write(`orchard: ${error.message}\n`);
      return 2;
    }
  }
  stderr.write(RELEASE_USAGE + '\n');
  return 2;
}

export async function updatesCommand(config: Config, args: string[], stdout: Out, stderr: Out): Promise<number> {
  const [verb, applyId] = args;
  if (verb !== 'unfreeze' || !applyId || args.length !== 2) {
    stderr.write(UPDATES_USAGE + '\n');
    return 2;
  }
  const client = new SidecarClient(
    config.updates.orch.sidecarUrl,
    config.updater.tokenFile,
    'ORCH_UPDATER_API_TOKEN_FILE',
  );
  try {
    const reply = await client.request('POST', `/v1/apply/${encodeURIComponent(applyId)}/unfreeze`, {
      operator: process.env.USER ?? 'operator',
    });
    if (reply.status !== 200) {
      stderr.write(`orchard: ${reply.body?.error ?? reply.status}: ${reply.body?.message ?? ''}\n`);
      return reply.status === 404 ? 1 : 3;
    }
    stdout.write(JSON.stringify(reply.body) + '\n');
    return 0;
  } catch (error) {
    if (error instanceof SidecarUnavailable) {
      stderr.write(`orchard: ${error.message}\n`);
      return 4;
    }
    throw error;
  }
}
