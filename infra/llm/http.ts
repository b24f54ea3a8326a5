// The network adapters' one HTTP exchange: POST JSON, with a per-attempt timeout and the retry
// policy of the spec ("Limits": model retry).
//
// - 429, 503 and 529 (Anthropic's "overloaded") are retried: up to `maxAttempts` attempts in
//   all. The wait before the next attempt is the answer's `Retry-After` (seconds or an HTTP date)
//   when it has one, else exponential backoff with full jitter (a random wait between 0 and
//   BASE_MS × 2^(attempt-1)); either way at most `ceilMs`.
// - Still overloaded after the last attempt: `ModelError('overloaded')` with the seconds to wait
//   (the last Retry-After, else the ceiling), which the API answers as 503 `model_overloaded`.
// - Anything else that is not a 2xx (another 5xx, a 4xx such as a rejected key), a connection
//   that fails, a timeout, or a body that is not JSON: `ModelError('unavailable')` at once; those
//   are not transient in the way an overload is, and retrying would only triple the wait.
// - Nothing of the request's headers (the key) or the provider's body reaches a message.

import { ModelError } from './port.ts';

export interface RetryPolicy {
  maxAttempts: number;
  ceilMs: number;
  timeoutMs: number;
  /** Injected so tests can record the waits instead of sleeping them. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export const BASE_BACKOFF_MS = 250;
const RETRYABLE = new Set([429, 503, 529]);

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Milliseconds a `Retry-After` value asks for (delta seconds or an HTTP date), or null when unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** The wait before attempt `attempt + 1` after an overloaded answer. */
export function backoffMs(
  attempt: number,
  retryAfter: number | null,
  policy: Pick<RetryPolicy, 'ceilMs' | 'random'>,
): number {
  if (retryAfter !== null) return Math.min(policy.ceilMs, retryAfter);
  const random = policy.random ?? Math.random;
  return Math.floor(random() * Math.min(policy.ceilMs, BASE_BACKOFF_MS * 2 ** (attempt - 1)));
}

export async function postJson(
  url: string,
  headers: Record<string, string>,
  body: unknown,
  policy: RetryPolicy,
): Promise<unknown> {
  const sleep = policy.sleep ?? realSleep;
  const attempts = Math.max(1, policy.maxAttempts);
  const payload = JSON.stringify(body);
  let lastRetryAfter: number | null = null;
  for (let attempt = 1; ; attempt++) {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: payload,
        signal: AbortSignal.timeout(policy.timeoutMs),
      });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new ModelError(
        'unavailable',
        timedOut
          ? `the model provider did not answer within ${policy.timeoutMs} ms`
          : 'the model provider cannot be reached',
      );
    }
    if (response.ok) {
      const text = await response.text().catch(() => null);
      try {
        if (text === null) throw new Error('no body');
        return JSON.parse(text);
      } catch {
        throw new ModelError('unavailable', 'the model provider answered with a body that is not JSON');
      }
    }
    await response.body?.cancel().catch(() => {});
    if (!RETRYABLE.has(response.status)) {
      throw new ModelError('unavailable', `the model provider refused the call (HTTP ${response.status})`);
    }
    lastRetryAfter = retryAfterMs(response.headers.get('retry-after'));
    if (attempt >= attempts) {
      const waitMs = Math.min(policy.ceilMs, lastRetryAfter ?? policy.ceilMs);
      throw new ModelError(
        'overloaded',
        `the model provider is overloaded (HTTP ${response.status}) after ${attempts} attempts`,
        Math.max(1, Math.ceil(waitMs / 1000)),
      );
    }
    await sleep(backoffMs(attempt, lastRetryAfter, policy));
  }
}

/** Strip a trailing slash, so `${base}/v1/...` never doubles it. */
export const trimBase = (url: string) => url.replace(/\/+$/, '');
