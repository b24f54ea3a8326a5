// The chat-service REST client of the connector: one undici Agent per integration (so
// `verify_tls: false` drops certificate checks for that integration's REST calls only), extra
// roots from ORCH_CHATSVC_CA_BUNDLE, JSON in and out. The bot token travels in `X-Bot-Token`;
// nothing here logs a token or a body.
//
// A transport failure is `ChatsvcUnreachable` with a readable `detail`; for a TLS failure the
// detail names the TLS error and says what to change (`verify_tls: false`, or the CA bundle).

import { rootCertificates } from 'node:tls';
import { Agent, fetch, type Dispatcher } from 'undici';

export interface ChatsvcReply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

export class ChatsvcUnreachable extends Error {
  override name = 'ChatsvcUnreachable';
  constructor(
    readonly detail: string,
    readonly tls: boolean,
  ) {
    super(detail);
  }
}

export const TLS_HINT =
  "set verify_tls: false for this integration, or add the chat service's CA to ORCH_CHATSVC_CA_BUNDLE";

/** Why a request never got an answer, in words (never a token or a body). */
export function transportFailure(error: unknown): ChatsvcUnreachable {
  let cause = error as (Error & { code?: string; cause?: unknown }) | undefined;
  for (let depth = 0; cause && depth < 4; depth++) {
    const code = cause.code ?? '';
    if (
      TLS_CODES.has(code) ||
      code.startsWith('ERR_TLS') ||
      code.startsWith('ERR_SSL') ||
      /certificate|self[- ]signed|TLS|SSL/i.test(cause.message ?? '')
    ) {
      return new ChatsvcUnreachable(`TLS error ${code || 'unknown'}: ${cause.message}; ${TLS_HINT}`, true);
    }
    if (!cause.cause) break;
    cause = cause.cause as typeof cause;
  }
  const last = cause ?? (error as Error);
  const code = (last as { code?: string }).code;
  return new ChatsvcUnreachable(
    `chat service unreachable: ${code ? `${code} ` : ''}${last?.message ?? String(error)}`,
    false,
  );
}

/** Trusted roots for the connector: the system's plus ORCH_CHATSVC_CA_BUNDLE's (null: the defaults). */
export function trustedRoots(caBundlePem: string | null): string[] | undefined {
  return caBundlePem ? [...rootCertificates, caBundlePem] : undefined;
}

export interface TransportOptions {
  verifyTls: boolean;
  caBundlePem: string | null;
  /** Per request (default 15 s). */
  timeoutMs?: number;
}

export function createDispatcher(options: TransportOptions): Dispatcher {
  const ca = trustedRoots(options.caBundlePem);
  return new Agent({
    connect: { rejectUnauthorized: options.verifyTls, ...(ca ? { ca } : {}) },
    headersTimeout: options.timeoutMs ?? 15_000,
    bodyTimeout: options.timeoutMs ?? 15_000,
    connections: 16,
  });
}

export class ChatsvcClient {
  constructor(
    readonly baseUrl: string,
    private readonly dispatcher: Dispatcher,
    private readonly auth: { botToken?: string; provisionToken?: string } = {},
    /** Times a 429 is waited out (its Retry-After, at most 10 s) before it is returned: the bot's sockets use it. */
    private readonly patience = 0,
  ) {}

  /** The same client, waiting out up to `times` 429s per call (the chat's per-token limit). */
  patient(times: number): ChatsvcClient {
    return new ChatsvcClient(this.baseUrl, this.dispatcher, this.auth, times);
  }

  withProvisionToken(token: string): ChatsvcClient {
    return new ChatsvcClient(this.baseUrl, this.dispatcher, { provisionToken: token });
  }

  withBotToken(token: string): ChatsvcClient {
    return new ChatsvcClient(this.baseUrl, this.dispatcher, { botToken: token });
  }

  async call(
    method: string,
    path: string,
    json?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ChatsvcReply> {
    let reply = await this.once(method, path, json, headers);
    for (let attempt = 0; reply.status === 429 && attempt < this.patience; attempt++) {
      const seconds = Math.min(10, Math.max(1, Number(reply.headers.get('retry-after')) || 1));
      await new Promise((r) => setTimeout(r, seconds * 1000));
      reply = await this.once(method, path, json, headers);
    }
    return reply;
  }

  private async once(
    method: string,
    path: string,
    json: unknown,
    headers: Record<string, string>,
  ): Promise<ChatsvcReply> {
    const token = this.auth.botToken ?? this.auth.provisionToken;
    const all: Record<string, string> = { accept: 'application/json', ...headers };
    if (token) all['x-bot-token'] = token;
    if (json !== undefined) all['content-type'] = 'application/json';
    let res;
    try {
      res = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers: all,
        body: json === undefined ? undefined : JSON.stringify(json),
        dispatcher: this.dispatcher,
      });
    } catch (error) {
      throw transportFailure(error);
    }
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      throw transportFailure(error);
    }
    let body: unknown = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    return { status: res.status, headers: res.headers as unknown as Headers, body, text };
  }
}
