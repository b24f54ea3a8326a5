// The `orchard` CLI as a child process, as a user runs it.

import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/orchard.mjs');
const run = promisify(execFile);

/** Run `orchard <args>` with `env` added to this process's environment; never throws on a non-zero exit. */
export async function orchard(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 64 << 20 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}
