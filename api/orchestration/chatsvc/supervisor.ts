// The bot sockets' supervisor (spec 1, inbound answering: "a supervisor polls for active
// integrations about every 5 minutes"): one socket (./bot.ts) per active integration in this
// process, started, retried and stopped as the integrations read model changes, and one
// socket per integration across instances (an advisory lock per integration, all held on one
// database session of this process; the instances without it show `standby`).
//
// It has no timer of its own: it is driven by a processor (./reactor.ts, a reactor of scope
// `each`: every instance runs it), which reconciles when it starts and after each integration
// event (ChatIntegrationConnected starts a socket, IntegrationRevokedExternally and
// ChatIntegrationDeleted stop it), and runs the full pass every ORCH_CHATSVC_SUPERVISOR_SECS
// (retrying standby sockets and rotating signed prekeys have no event).

import { botsHealth } from '../../../domain/orchestration/chatsvc/rules.ts';
import type { PoolClient } from '../../../infra/db/pool.ts';
import { activeIntegrations, type IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import type { OrchDeps } from '../deps.ts';
import type { BotHost } from './bot-host.ts';
import { BotSocket, type SocketView } from './bot.ts';

const sameIntegration = (a: IntegrationRow, b: IntegrationRow) =>
  a.integration_id === b.integration_id && a.token_sealed === b.token_sealed;

export type SupervisorDeps = Pick<OrchDeps, 'db' | 'config' | 'log'>;

export class BotSupervisor {
  private readonly bots = new Map<string, BotSocket>();
  private running = false;
  private ticking: Promise<void> | null = null;
  private lockClient: PoolClient | null = null;
  private lockQueue: Promise<unknown> = Promise.resolve();
  /**
   * When a command last started or stopped a profile's socket (a counter): a pass leaves alone a
   * socket a command changed after the pass read the read model (its row may predate the
   * command's event); the next pass reads the command's effect.
   */
  private changes = 0;
  private readonly changedAt = new Map<string, number>();

  constructor(
    private readonly deps: SupervisorDeps,
    private readonly host: BotHost,
  ) {}

  /** This process runs the bot sockets from now on; its processor (./reactor.ts) makes the passes. */
  start(): void {
    this.running = true;
  }

  /** One full pass now, its failure logged (tests; the processor calls `pass`). */
  tick(): Promise<void> {
    this.ticking ??= this.pass(true)
      .catch((error: Error) => {
        this.deps.log.error('chatsvc_supervisor_failed', { error: error.message });
      })
      .finally(() => {
        this.ticking = null;
      });
    return this.ticking;
  }

  /**
   * Bring the sockets in line with the integrations read model: start missing sockets, stop
   * stale ones; with `upkeep` (the periodic pass), also retry standby ones and maintain the keys
   * of connected ones. Nothing while this process does not run the sockets.
   */
  async pass(upkeep: boolean): Promise<void> {
    if (!this.running) return;
    const began = this.changes;
    const active = await activeIntegrations(this.deps.db);
    if (!this.running) return;
    const changedSince = (profileId: string) => (this.changedAt.get(profileId) ?? 0) > began;
    const wanted = new Map(active.map((r) => [r.profile_id, r]));
    for (const [profileId, bot] of this.bots) {
      const row = wanted.get(profileId);
      if (changedSince(profileId)) continue;
      // Another integration, or the same one reconnected with a new token (by another instance).
      if (!row || !sameIntegration(row, bot.integration)) await this.stop1(profileId);
    }
    for (const row of active) {
      const bot = this.bots.get(row.profile_id);
      if (changedSince(row.profile_id)) continue;
      if (!bot) this.startBot(row);
      else if (!upkeep) continue;
      else if (bot.view().state === 'standby' || bot.view().state === 'stopped') bot.retry();
      // The weekly signed-prekey rotation rides on the supervisor's pass (a socket may stay up for weeks).
      // Not awaited (the pass does not wait for the socket's queue); the queue never rejects: the
      // socket logs and counts a failed maintenance itself (BotSocket.enqueue).
      else if (bot.view().state === 'connected') void bot.maintainSoon();
    }
  }

  /** A connect stored this integration: its socket starts now, if this process runs the sockets. */
  startIfRunning(row: IntegrationRow): void {
    if (!this.running) return;
    this.changedAt.set(row.profile_id, ++this.changes);
    const bot = this.bots.get(row.profile_id);
    // A pass may have started it from the read model already.
    if (bot && sameIntegration(row, bot.integration)) return;
    if (!bot) return this.startBot(row);
    void this.stop1(row.profile_id).then(() => {
      if (this.running && !this.bots.has(row.profile_id)) this.startBot(row);
    });
  }

  private startBot(row: IntegrationRow): void {
    const bot = new BotSocket(this.host, row);
    this.bots.set(row.profile_id, bot);
    bot.start();
  }

  /** A command's stop (a delete, a revoke, a reconnect): a pass that read the read model before it does not undo it. */
  async stopBot(profileId: string): Promise<void> {
    this.changedAt.set(profileId, ++this.changes);
    await this.stop1(profileId);
  }

  private async stop1(profileId: string): Promise<void> {
    const bot = this.bots.get(profileId);
    if (!bot) return;
    this.bots.delete(profileId);
    await bot.stop();
  }

  /** The integration's socket as the status shows it (one this process does not run: stopped, or disconnected while the supervisor runs). */
  view(row: IntegrationRow): SocketView {
    return (
      this.bots.get(row.profile_id)?.view() ?? {
        state: row.status === 'active' ? (this.running ? 'disconnected' : 'stopped') : 'stopped',
        since: null,
        last_error: null,
      }
    );
  }

  /** `integrations.chatsvc_bot_ws` of the health route. */
  health(): { status: string; active: number; connected: number; down: number; standby: number } {
    return botsHealth([...this.bots.values()].map((b) => b.view().state));
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.ticking;
    await Promise.all([...this.bots.keys()].map((id) => this.stop1(id)));
    if (this.lockClient) {
      const client = this.lockClient;
      this.lockClient = null;
      await client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      client.release();
    }
  }

  // --- one socket per integration across instances ---------------------------------------------

  private withLockClient<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    const run = this.lockQueue.then(async () => {
      if (!this.lockClient) {
        this.lockClient = await this.deps.db.connect();
        this.lockClient.on('error', (error) => {
          this.deps.log.error('chatsvc_lock_session_lost', { error: error.message });
          this.lockClient = null;
          for (const bot of this.bots.values()) bot.lockLost();
        });
      }
      return work(this.lockClient);
    });
    this.lockQueue = run.catch(() => {});
    return run;
  }

  async lock(integrationId: string): Promise<boolean> {
    return this.withLockClient(
      async (c) =>
        (
          await c.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(hashtextextended('chatsvc:' || $1, 0)) AS ok`, [
            integrationId,
          ])
        ).rows[0]!.ok,
    );
  }

  async unlock(integrationId: string): Promise<void> {
    if (!this.lockClient) return;
    await this.withLockClient((c) =>
      c.query(`SELECT pg_advisory_unlock(hashtextextended('chatsvc:' || $1, 0))`, [integrationId]),
    ).catch(() => {});
  }
}
