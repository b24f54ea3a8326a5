// pg_dump and psql for snapshots and restores: the snapshot is the whole database (log
// included) with `--clean --if-exists`; the restore replaces the public schema in one
// transaction with ON_ERROR_STOP, so it either lands whole or changes nothing.

import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { StepError } from './runtime.ts';

const run = promisify(execFile);

const tool = (binDir: string | null, name: string) => (binDir ? path.join(binDir, name) : name);

/** libpq takes the URL itself; the password goes through the environment, never the argument list. */
function connection(databaseUrl: string): { url: string; env: NodeJS.ProcessEnv } {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  return { url: url.toString(), env: { ...process.env, PGPASSWORD: password } };
}

export async function toolMajor(binDir: string | null, name: string): Promise<number> {
  const { stdout } = await run(tool(binDir, name), ['--version']);
  const match = /(\d+)(?:\.\d+)?/.exec(stdout);
  if (!match) throw new StepError('snapshot_tool_missing', `${name} --version said ${stdout.trim()}`);
  return Number(match[1]);
}

export async function serverMajor(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>('SHOW server_version_num');
    return Math.floor(Number(rows[0]!.v) / 10000);
  } finally {
    await client.end();
  }
}

/** Pre-flight: pg_dump must be at least the server's major version. */
export async function checkSnapshotTool(binDir: string | null, databaseUrl: string): Promise<void> {
  let dump: number;
  try {
    dump = await toolMajor(binDir, 'pg_dump');
  } catch (error) {
    if (error instanceof StepError) throw error;
    throw new StepError('snapshot_tool_missing', `pg_dump cannot be run: ${(error as Error).message}`);
  }
  const server = await serverMajor(databaseUrl);
  if (dump < server)
    throw new StepError(
      'snapshot_tool_too_old',
      `pg_dump ${dump} cannot dump a PostgreSQL ${server} server; set ORCH_UPDATER_PG_BINDIR to a pg_dump of major ${server} or newer`,
    );
}

export async function pgDump(binDir: string | null, databaseUrl: string, file: string): Promise<void> {
  const { url, env } = connection(databaseUrl);
  try {
    await run(
      tool(binDir, 'pg_dump'),
      ['--clean', '--if-exists', '--no-owner', '--no-privileges', '--file', file, '--dbname', url],
      { env, maxBuffer: 16 << 20 },
    );
  } catch (error) {
    throw new StepError(
      'snapshot_failed',
      `pg_dump failed: ${String((error as { stderr?: string }).stderr ?? (error as Error).message)
        .trim()
        .split('\n')
        .at(-1)}`,
    );
  }
  const handle = await open(file, 'r+');
  await handle.sync();
  await handle.close();
}

export async function psqlRestore(binDir: string | null, databaseUrl: string, file: string): Promise<void> {
  const { url, env } = connection(databaseUrl);
  try {
    // Objects a newer release created are dropped with the schema; the dump recreates the rest.
    await run(
      tool(binDir, 'psql'),
      [
        '-X',
        '-q',
        '--single-transaction',
        '-v',
        'ON_ERROR_STOP=1',
        '--dbname',
        url,
        '-c',
        'DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;',
        '-f',
        file,
      ],
      { env, maxBuffer: 16 << 20 },
    );
  } catch (error) {
    throw new StepError(
      'restore_failed',
      `psql failed: ${String((error as { stderr?: string }).stderr ?? (error as Error).message)
        .trim()
        .split('\n')
        .at(-1)}`,
    );
  }
}
