// The agent runner (`orchard serve runner`): where it finds orchestration, and how much it runs.

import path from 'node:path';
import { derived, type EnvVars, type ListenAddress, positiveInt, text, type Values } from './kinds.ts';

export const runnerVars = {
  ORCH_RUNNER_API_KEY: text({ description: 'the runner service principal key', secret: true }),
  ORCH_RUNNER_SERVER_URL: derived({
    description: 'where the runner reaches orchestration (a wildcard ORCH_LISTEN host is reached on loopback)',
    default: 'http:// + ORCH_LISTEN',
  }),
  ORCH_RUNNER_WORK_DIR: derived({
    description: "where the runner puts agents' working directories",
    default: 'DATA_DIR/agents',
  }),
  ORCH_RUNNER_MAX_ITERATIONS: positiveInt({
    description: 'model calls an agent loop may make before it fails',
    default: 10,
  }),
  ORCH_RUNNER_CONCURRENCY: positiveInt({ description: 'agents one runner process runs at once', default: 4 }),
  ORCH_RUNNER_POLL_MS: positiveInt({
    description: 'how often the runner looks for queued agents and for stops and kills (milliseconds)',
    default: 1000,
  }),
} satisfies EnvVars;

export interface RunnerConfig {
  /** No trailing slash. */
  serverUrl: string;
  workDir: string;
  maxIterations: number;
  concurrency: number;
  pollMs: number;
}

/** The runner's server: ORCH_RUNNER_SERVER_URL, else the orchestration listen address (a wildcard host reached on loopback). */
export function runnerConfig(v: Values<typeof runnerVars>, dataDir: string, orch: ListenAddress): RunnerConfig {
  const host =
    orch.host === '0.0.0.0' || orch.host === ''
      ? '127.0.0.1'
      : orch.host === '::'
        ? '[::1]'
        : orch.host.includes(':')
          ? `[${orch.host}]`
          : orch.host;
  return {
    serverUrl: (v.ORCH_RUNNER_SERVER_URL ?? `http://${host}:${orch.port}`).replace(/\/+$/, ''),
    workDir: path.resolve(v.ORCH_RUNNER_WORK_DIR ?? path.join(dataDir, 'agents')),
    maxIterations: v.ORCH_RUNNER_MAX_ITERATIONS,
    concurrency: v.ORCH_RUNNER_CONCURRENCY,
    pollMs: v.ORCH_RUNNER_POLL_MS,
  };
}
