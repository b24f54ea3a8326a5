// How a service talks to the updater sidecar: every request signed with the shared token, every
// response's signature checked (a forged, altered or replayed answer is refused like an
// unreachable sidecar). The sidecar may answer with `id` or `apply_id` and `current_state` or
// `state` (older sidecars); both are read.

import { newNonce, signatureMatches, signRequest, signResponse } from '../../crypto/request-signature.ts';
import type { Clock } from '../clock.ts';
import { readSidecarToken } from './sidecar-token.ts';

export const RESPONSE_SKEW_SECS = 300;

export class SidecarUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SidecarUnavailable';
  }
}

export interface SidecarReply {
  status: number;
  body: any;
}

export interface SidecarApplyRequest {
  apply_id: string;
  manifest: unknown;
  requested_by: string;
  source: string;
}

/** Where an apply stands: the sidecar's answer, and the start of the API's apply detail. */
export interface ApplyProgress {
  apply_id: string;
  state: string;
  phase: string | null;
  outcome: string | null;
  error: unknown;
  from_version: string | null;
  to_version: string | null;
  started_at: string | null;
  ended_at: string | null;
}

/** The sidecar's answer keeps whatever else it sent. */
export interface SidecarApply extends ApplyProgress {
  [extra: string]: unknown;
}

/** The two spellings of the sidecar's apply answer, read as one. */
export function normalizeApply(body: Record<string, unknown>): SidecarApply {
  return {
    ...body,
    apply_id: String(body.apply_id ?? body.id ?? ''),
    state: String(body.state ?? body.current_state ?? 'unknown'),
    phase: (body.phase as string) ?? null,
    outcome: (body.outcome as string) ?? null,
    error: body.error ?? null,
    from_version: (body.from_version as string) ?? null,
    to_version: (body.to_version as string) ?? null,
    started_at: (body.started_at as string) ?? null,
    ended_at: (body.ended_at as string) ?? null,
  };
}

export class SidecarClient {
  constructor(
    readonly baseUrl: string,
    private readonly tokenFile: string | null,
    private readonly tokenVariable: string,
    private readonly clock: Clock = { now: () => new Date() },
    private readonly timeoutMs = 10_000,
  ) {}

  async request(method: string, pathAndQuery: string, json?: unknown): Promise<SidecarReply> {
    let token: Uint8Array;
    try {
      token = readSidecarToken(this.tokenFile, this.tokenVariable);
    } catch (error) {
      throw new SidecarUnavailable(`no sidecar token: ${(error as Error).message}`);
    }
    const body = json === undefined ? '' : JSON.stringify(json);
    const timestamp = String(Math.floor(this.clock.now().getTime() / 1000));
    const nonce = newNonce();
    let res: Response;
    try {
      res = await fetch(this.baseUrl + pathAndQuery, {
        method,
        headers: {
          'x-orchard-timestamp': timestamp,
          'x-orchard-nonce': nonce,
          'x-orchard-signature': signRequest(token, { method, pathAndQuery, timestamp, nonce, body }),
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: json === undefined ? undefined : body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new SidecarUnavailable(`the sidecar cannot be reached at ${this.baseUrl}: ${(error as Error).message}`);
    }
    const text = await res.text();
    const at = res.headers.get('x-orchard-timestamp') ?? '';
    const expected = signResponse(token, { status: res.status, requestNonce: nonce, timestamp: at, body: text });
    if (!signatureMatches(expected, res.headers.get('x-orchard-signature')))
      throw new SidecarUnavailable("the sidecar's answer is not signed with the shared token");
    if (!/^\d+$/.test(at) || Math.abs(Number(at) - this.clock.now().getTime() / 1000) > RESPONSE_SKEW_SECS) {
      throw new SidecarUnavailable("the sidecar's answer is outside the time window");
    }
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new SidecarUnavailable('the sidecar answered something other than JSON');
    }
    return { status: res.status, body: parsed };
  }

  startApply(req: SidecarApplyRequest) {
    return this.request('POST', '/v1/apply', req);
  }

  async apply(applyId: string): Promise<SidecarApply | null> {
    const reply = await this.request('GET', `/v1/apply/${encodeURIComponent(applyId)}`);
    if (reply.status === 404) return null;
    if (reply.status !== 200) throw new SidecarUnavailable(`the sidecar answered ${reply.status}`);
    return normalizeApply(reply.body);
  }

  async events(applyId: string, after = 0): Promise<{ events: unknown[] } | null> {
    const reply = await this.request('GET', `/v1/apply/${encodeURIComponent(applyId)}/events?after=${after}`);
    return reply.status === 200 ? reply.body : null;
  }

  async status(): Promise<Record<string, unknown>> {
    const reply = await this.request('GET', '/v1/status');
    if (reply.status !== 200) throw new SidecarUnavailable(`the sidecar answered ${reply.status}`);
    return reply.body;
  }

  async delivery(): Promise<Record<string, unknown>> {
    const reply = await this.request('GET', '/v1/delivery');
    if (reply.status !== 200) throw new SidecarUnavailable(`the sidecar answered ${reply.status}`);
    return reply.body;
  }
}
