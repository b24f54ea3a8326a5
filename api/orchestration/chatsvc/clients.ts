// What every part of the connector reaches the chat service with: the integration key
// (ORCH_INTEGRATION_ENCRYPTION_KEY; without it the connector is disabled), the device store it
// seals, and each integration's REST client. An integration's REST calls use its own undici
// Agent, so `verify_tls` false drops certificate checks for that integration only (spec 1, TLS);
// ORCH_CHATSVC_CA_BUNDLE adds trusted roots to every client.

import { openSecret, parseKeyHex } from '../../../crypto/seal.ts';
import { botTokenSealContext } from '../../../domain/orchestration/chatsvc/decider.ts';
import { normaliseInstanceUrl } from '../../../domain/orchestration/chatsvc/rules.ts';
import { ChatsvcClient, createDispatcher } from '../../../infra/chatsvc/client.ts';
import { DeviceStore } from '../../../infra/chatsvc/device-store.ts';
import type { IntegrationRow } from '../../../projections/orchestration/chatsvc.ts';
import { ApiError } from '../../shared/http-errors.ts';
import type { OrchDeps } from '../deps.ts';

export type ClientsDeps = Pick<OrchDeps, 'db' | 'config' | 'log'>;

/** 503 of every connector route (and use case) while the integration key is absent. */
export const integrationKeyMissing = () =>
  new ApiError(
    503,
    'integration_key_missing',
    'the chat-service connector needs ORCH_INTEGRATION_ENCRYPTION_KEY (or ORCH_INTEGRATION_ENCRYPTION_KEY_FILE)',
  );

export class ChatsvcClients {
  readonly key: Uint8Array | null;
  readonly store: DeviceStore | null;
  private readonly dispatchers = new Map<
    string,
    { verifyTls: boolean; dispatcher: ReturnType<typeof createDispatcher> }
  >();

  constructor(private readonly deps: ClientsDeps) {
    const hex = deps.config.chatsvc.integrationKeyHex;
    this.key = hex ? parseKeyHex(hex) : null;
    this.store = this.key ? new DeviceStore(deps.db, this.key) : null;
  }

  get enabled(): boolean {
    return this.key !== null;
  }

  requireKey(): { key: Uint8Array; store: DeviceStore } {
    if (!this.key || !this.store) throw integrationKeyMissing();
    return { key: this.key, store: this.store };
  }

  /** A REST client for an instance with this TLS setting (the connect and communities calls). */
  transient(instanceUrl: string, verifyTls: boolean): ChatsvcClient {
    if (!verifyTls) this.deps.log.warn('chatsvc_tls_verification_off', { instance_url: instanceUrl });
    return new ChatsvcClient(
      normaliseInstanceUrl(instanceUrl),
      createDispatcher({ verifyTls, caBundlePem: this.deps.config.chatsvc.caBundle?.pem ?? null }),
    );
  }

  /** The integration's own client: its undici Agent, its bot token. */
  client(integration: IntegrationRow): ChatsvcClient {
    let entry = this.dispatchers.get(integration.integration_id);
    if (!entry || entry.verifyTls !== integration.verify_tls) {
      if (!integration.verify_tls)
        this.deps.log.warn('chatsvc_tls_verification_off', {
          profile_id: integration.profile_id,
          instance_url: integration.instance_url,
        });
      entry = {
        verifyTls: integration.verify_tls,
        dispatcher: createDispatcher({
          verifyTls: integration.verify_tls,
          caBundlePem: this.deps.config.chatsvc.caBundle?.pem ?? null,
        }),
      };
      this.dispatchers.set(integration.integration_id, entry);
    }
    return new ChatsvcClient(integration.instance_url, entry.dispatcher, { botToken: this.botToken(integration) });
  }

  botToken(integration: IntegrationRow): string {
    const { key } = this.requireKey();
    return openSecret(
      key,
      integration.token_sealed,
      botTokenSealContext(integration.profile_id, integration.integration_id),
    );
  }

  /** An integration that is gone (deleted, or replaced by a new identity): its Agent goes with it. */
  forget(integrationId: string): void {
    this.dispatchers.delete(integrationId);
  }

  async close(): Promise<void> {
    for (const { dispatcher } of this.dispatchers.values())
      await (dispatcher as { close?: () => Promise<void> }).close?.().catch(() => {});
    this.dispatchers.clear();
  }
}
