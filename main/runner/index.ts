// The runner (`orchard serve runner`): a separate process with no database, talking HTTP to the
// orchestration API at ORCH_RUNNER_SERVER_URL with ORCH_RUNNER_API_KEY. At start it recovers
// (whatever a previous run held is failed with a reason), then claims queued agents while it
// has room (ORCH_RUNNER_CONCURRENCY; the server keeps each project within its
// max_concurrent_agents), and for each: prepares its working directory, reports `running`, runs
// the agent loop, reports the outcome and releases the directory. It polls each running agent's
// status, so a stop or kill from the API ends the agent's loop. On SIGINT/SIGTERM it reports the
// agents it runs as failed (`runner_stopped`) and exits.

import { randomUUID } from 'node:crypto';
import type { Config } from '../../infra/config.ts';
import { createModels, type Models } from '../../infra/llm/index.ts';
import type { Logger } from '../../infra/logging.ts';
import { StartupError } from '../../infra/startup-error.ts';
import { runAgentLoop, type Outcome } from './agent-loop.ts';
import { ApiClient, type ClaimedAgent } from './client.ts';
import { prepareWorkDir, releaseWorkDir, type WorkDir } from './workdir.ts';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

export class Runner {
  readonly instance = randomUUID();
  private readonly api: ApiClient;
  private readonly models: Models;
  private readonly active = new Map<string, { stop: () => void; done: Promise<void> }>();
  private readonly shutdown = new AbortController();

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    if (!config.runnerApiKey) throw new StartupError('the runner needs ORCH_RUNNER_API_KEY');
    this.api = new ApiClient(config.runner.serverUrl, config.runnerApiKey);
    this.models = createModels(config.llm, log);
  }

  /** Runs until `stop()`. */
  async run(): Promise<void> {
    const { pollMs, concurrency } = this.config.runner;
    await this.recover();
    this.log.info('runner_started', { instance: this.instance, server: this.config.runner.serverUrl, concurrency });
    while (!this.shutdown.signal.aborted) {
      let claimed: ClaimedAgent | null = null;
      if (this.active.size < concurrency) {
        try {
          claimed = await this.api.claim(this.instance);
        } catch (error) {
          this.log.warn('runner_claim_failed', { error: (error as Error).message });
        }
      }
      if (claimed && !this.shutdown.signal.aborted) this.start(claimed);
      else await sleep(pollMs, this.shutdown.signal);
    }
    for (const { stop } of this.active.values()) stop();
    await Promise.all([...this.active.values()].map((a) => a.done));
  }

  stop(): void {
    this.shutdown.abort();
  }

  /** Until the server answers: whatever a previous run held is failed, never left running. */
  private async recover(): Promise<void> {
    for (let attempt = 1; !this.shutdown.signal.aborted; attempt++) {
      try {
        const { failed } = await this.api.recover(this.instance);
        if (failed.length) this.log.warn('runner_recovered', { failed });
        return;
      } catch (error) {
        if (attempt === 1 || attempt % 30 === 0)
          this.log.warn('runner_server_unreachable', {
            server: this.config.runner.serverUrl,
            error: (error as Error).message,
          });
        await sleep(this.config.runner.pollMs, this.shutdown.signal);
      }
    }
  }

  private start(claim: ClaimedAgent): void {
    let stop!: () => void;
    const stopping = new Promise<void>((resolve) => (stop = resolve));
    const done = this.execute(claim, stopping)
      .catch((error) => {
        this.log.error('runner_agent_crashed', { agent_id: claim.agent.id, error: (error as Error).message });
      })
      .finally(() => this.active.delete(claim.agent.id));
    this.active.set(claim.agent.id, { stop, done });
  }

  private async execute(claim: ClaimedAgent, stopping: Promise<void>): Promise<void> {
    const { agent } = claim;
    this.log.info('agent_claimed', {
      agent_id: agent.id,
      name: agent.name,
      project_id: agent.project_id,
      model: agent.model,
      mcp_servers: claim.mcp_servers.length,
    });
    let work: WorkDir | null = null;
    let outcome: Outcome;
    // Stop or kill from the API, or this runner shutting down, ends the loop.
    let ended = false;
    let byRunner = false;
    const watch = (async () => {
      const abort = stopping.then(() => {
        byRunner = true;
      });
      while (!ended) {
        await Promise.race([sleep(this.config.runner.pollMs), abort]);
        if (ended || byRunner) return;
        const status = await this.api.agentStatus(agent.id).catch(() => 'unknown');
        if (status === 'stopped' || status === 'killed' || status === 'failed' || status === 'completed') return;
      }
    })();
    try {
      work = await prepareWorkDir(this.config.runner.workDir, agent, claim.project);
      if ((await this.api.report(agent.id, { event: 'running', runner_instance: this.instance })) !== 'running') {
        outcome = { outcome: 'abandoned' };
      } else {
        outcome = await runAgentLoop(
          claim,
          { api: this.api, models: this.models, maxIterations: this.config.runner.maxIterations, workDir: work.path },
          watch,
        );
      }
    } catch (error) {
      outcome = { outcome: 'failed', reason: `runner_error: ${(error as Error).message}` };
    }
    ended = true;
    if (outcome.outcome === 'abandoned' && byRunner)
      outcome = { outcome: 'failed', reason: 'runner_stopped: the runner shut down while the agent was running' };
    if (outcome.outcome !== 'abandoned') {
      const report =
        outcome.outcome === 'completed'
          ? { event: 'completed', runner_instance: this.instance }
          : { event: 'failed', runner_instance: this.instance, reason: outcome.reason.slice(0, 2000) };
      await this.api
        .report(agent.id, report)
        .catch((error) =>
          this.log.warn('runner_report_failed', { agent_id: agent.id, error: (error as Error).message }),
        );
    }
    if (work)
      await releaseWorkDir(work, agent.persistent).catch((error) =>
        this.log.warn('runner_workdir_cleanup_failed', { agent_id: agent.id, error: (error as Error).message }),
      );
    this.log.info('agent_ended', {
      agent_id: agent.id,
      outcome: outcome.outcome,
      reason: 'reason' in outcome ? outcome.reason : null,
      workdir_kept: !!work && agent.persistent,
    });
  }
}

/** `orchard serve runner`: until SIGINT or SIGTERM. */
export async function serveRunner(config: Config, log: Logger): Promise<number> {
  const runner = new Runner(config, log);
  process.once('SIGINT', () => runner.stop());
  process.once('SIGTERM', () => runner.stop());
  await runner.run();
  log.info('runner_stopped', { instance: runner.instance });
  return 0;
}
