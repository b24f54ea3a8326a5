// The `orchard` CLI as a child process, as a user runs it: a command run to its end (`orchard`,
// `orchardOnTerminal`), or a long-running one (`serve`, `dev esdb`) watched as it prints (`startOrchard`).

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GiveUp, until } from './until.ts';

export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/orchard.mjs');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `file args` to its end (60 s at most) with `env` added to this process's environment; never throws on a non-zero exit (-1: no exit code, as when killed). */
function run(file: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: { ...process.env, ...env }, timeout: 60_000, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

/** Run `orchard <args>` with `env` added to this process's environment. */
export const orchard = (env: Record<string, string>, ...args: string[]) => run(process.execPath, [BIN, ...args], env);

/** The same command on a pseudo-terminal (script(1)), as an operator at a shell would run it. */
export const orchardOnTerminal = (env: Record<string, string>, ...args: string[]) =>
  run('script', ['-qec', [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' '), '/dev/null'], env);

export interface RunningOrchard {
  child: ChildProcess;
  /** What it printed so far, chunk by chunk: each stream alone, and both in the order they came. */
  stdout: string[];
  stderr: string[];
  output(): string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Poll `find` until it answers (say, a URL in a start line); fails at once if the process exits first, with its output. */
  waitFor<T>(what: string, find: () => T | null | undefined | false, ms: number): Promise<T>;
}

export interface StartOptions {
  /** The whole environment of the child (not added to this process's): callers leave out the settings it must not inherit. */
  env?: NodeJS.ProcessEnv;
  /** Another copy of the command (a checkout elsewhere), and the directory to run it in. */
  bin?: string;
  cwd?: string;
  /** Arguments for Node itself (`--cpu-prof`, say). */
  nodeArgs?: string[];
}

/** Start `orchard <args>` and return at once; stdin is closed, stdout and stderr are collected. */
export function startOrchard(args: string[], options: StartOptions = {}): RunningOrchard {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.bin ?? BIN, ...args], {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const all: string[] = [];
  child.stdout!.on('data', (chunk) => {
    stdout.push(String(chunk));
    all.push(String(chunk));
  });
  child.stderr!.on('data', (chunk) => {
    stderr.push(String(chunk));
    all.push(String(chunk));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const output = () => all.join('');
  const said = () => `orchard ${args.join(' ')} said:\n${output().slice(-3000)}`;
  return {
    child,
    stdout,
    stderr,
    output,
    exited,
    waitFor: (what, find, ms) =>
      until(
        () => `${what}; ${said()}`,
        async () => {
          const found = find();
          if (!found && (child.exitCode !== null || child.signalCode !== null)) {
            throw new GiveUp(
              `orchard ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}) before ${what}; ${said()}`,
            );
          }
          return found;
        },
        ms,
        100,
      ),
  };
}
