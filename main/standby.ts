// The child's side of a standby start (`orchard serve all --standby`; the protocol is in
// infra/updater/standby-protocol.ts): each step reports, then waits for the sidecar's go.

import { STANDBY_ABANDONED_EXIT, type FromStandby, type ToStandby } from '../infra/updater/standby-protocol.ts';
import { StartupError } from '../infra/startup-error.ts';

export class StandbyLink {
  private readonly received: ToStandby['type'][] = [];
  private waiter: { type: ToStandby['type']; resolve: () => void } | null = null;
  private released = false;

  constructor() {
    process.on('message', (message: ToStandby) => {
      if (this.waiter?.type === message?.type) {
        const { resolve } = this.waiter;
        this.waiter = null;
        resolve();
      } else if (message?.type) this.received.push(message.type);
    });
    process.once('disconnect', () => {
      if (this.released) return;
      process.stderr.write('orchard: the sidecar gave this standby start up (its channel closed): exiting\n');
      process.exit(STANDBY_ABANDONED_EXIT);
    });
  }

  private send(message: FromStandby): Promise<void> {
    return new Promise((resolve, reject) =>
      process.send!(message, undefined, {}, (error) => (error ? reject(error) : resolve())),
    );
  }

  private wait(type: ToStandby['type']): Promise<void> {
    const at = this.received.indexOf(type);
    if (at >= 0) {
      this.received.splice(at, 1);
      return Promise.resolve();
    }
    return new Promise((resolve) => (this.waiter = { type, resolve }));
  }

  /** Modules loaded: report, and wait until the sidecar says migrate. */
  async ready(): Promise<void> {
    await this.send({ type: 'ready' });
    await this.wait('migrate');
  }

  /** Migrated: report (the platform and the apps are then built while the sidecar journals it). */
  async migrated(applied: string[]): Promise<void> {
    await this.send({ type: 'migrated', applied });
  }

  /** Built: wait until the sidecar says serve (it has journaled the start). */
  async serveWhenTold(): Promise<void> {
    await this.wait('serve');
  }

  /** Listening: report, and let go of the channel (the services outlive the sidecar). */
  async listening(): Promise<void> {
    await this.send({ type: 'listening' });
    this.released = true;
    process.disconnect();
  }

  async failed(error: unknown): Promise<void> {
    if (this.released || !process.connected) return;
    await this.send({ type: 'failed', message: (error as Error)?.message ?? String(error) }).catch(() => {});
  }
}

export function openStandbyLink(): StandbyLink {
  if (!process.send || !process.connected)
    throw new StartupError('serve --standby is started by the updater sidecar (it needs its IPC channel)');
  return new StandbyLink();
}
