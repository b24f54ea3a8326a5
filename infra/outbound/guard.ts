// Outbound requests to addresses users name (link previews, their images; push endpoints): the
// SSRF guard. The destination is checked inside the connection's own DNS lookup, so the address
// checked is the address connected to (no second resolution a rebinding DNS server could
// answer differently). Refused: loopback, RFC 1918, CGNAT, link-local, unique-local,
// unspecified, multicast, broadcast, reserved, and the same inside IPv4-mapped, IPv4-compatible,
// NAT64 and 6to4 IPv6 forms (ipaddr.js); a name with any such answer is refused whole. Only
// ports 80 and 443. Each redirect (at most 5) is checked again. The test-only switch
// (CHATSVC_OUTBOUND_ALLOW_LOOPBACK with NODE_ENV=test) admits 127.0.0.0/8 and ::1 on any port.
//
// Limits: the whole exchange within `timeoutMs`, the body at most `maxBytes` after decompression
// (a gzip bomb stops at the limit). URLs are never logged here.
//
// `guardedFetch` GETs a page (link previews); `guardedSend` makes one request with a body and
// follows no redirect (web push); `checkDestination` checks a URL kept to be used later (a push
// endpoint) when it is given, and the connection checks it again each time.

import dns from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import net, { type LookupFunction } from 'node:net';
import zlib from 'node:zlib';
import ipaddr from 'ipaddr.js';

export type OutboundCode = 'destination_not_allowed' | 'fetch_failed' | 'timeout' | 'too_large' | 'unsupported_content';

export class OutboundError extends Error {
  constructor(
    readonly code: OutboundCode,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundPolicy {
  allowLoopback: boolean;
  /** `ip` or `ip:port`; empty: the system resolver. */
  dnsServers: string[];
}

const GLOBAL_V6 = ipaddr.parseCIDR('2000::/3');
const NAT64_LOCAL = ipaddr.parseCIDR('64:ff9b:1::/48');

function embeddedV4(bytes: number[], offset: number): ipaddr.IPv4 {
  return new ipaddr.IPv4(bytes.slice(offset, offset + 4));
}

/** Whether an address may be connected to (loopback only with the test switch). */
export function addressAllowed(address: string, allowLoopback: boolean): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  // The test switch admits 127.0.0.0/8 and ::1 as written, never inside another form.
  let loopbackOk = allowLoopback;
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    const range = v6.range();
    const bytes = v6.toByteArray();
    if (range === 'loopback') return allowLoopback;
    if (v6.match(NAT64_LOCAL)) return false;
    loopbackOk = false;
    if (range === 'ipv4Mapped' || range === 'rfc6145') parsed = embeddedV4(bytes, 12);
    else if (range === 'rfc6052') parsed = embeddedV4(bytes, 12);
    else if (range === '6to4') parsed = embeddedV4(bytes, 2);
    else if (bytes.slice(0, 12).every((b) => b === 0))
      parsed = embeddedV4(bytes, 12); // IPv4-compatible ::a.b.c.d
    else return range === 'unicast' && v6.match(GLOBAL_V6);
  }
  const range = (parsed as ipaddr.IPv4).range();
  if (range === 'loopback') return loopbackOk;
  return range === 'unicast';
}

const isLoopback = (address: string) => ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';

type Answer = { address: string; family: 4 | 6 };

async function resolveAll(hostname: string, servers: string[]): Promise<Answer[]> {
  if (!servers.length) {
    const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  }
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers(servers);
  const settle = async (f: () => Promise<string[]>, family: 4 | 6): Promise<Answer[]> => {
    try {
      return (await f()).map((address) => ({ address, family }));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENODATA' || code === 'ENOTFOUND') return [];
      throw error;
    }
  };
  const [v4, v6] = await Promise.all([
    settle(() => resolver.resolve4(hostname), 4),
    settle(() => resolver.resolve6(hostname), 6),
  ]);
  return [...v4, ...v6];
}

/**
 * The connection's DNS lookup: every answer is checked, and only checked addresses reach the
 * socket. `onRefused` learns that the refusal was the guard's (not a network failure).
 */
export function guardedLookup(policy: OutboundPolicy, loopbackOnly: boolean, onRefused: () => void): LookupFunction {
  return ((
    hostname: string,
    options: { all?: boolean; family?: number },
    callback: (error: Error | null, address: string | Answer[], family?: number) => void,
  ) => {
    resolveAll(hostname, policy.dnsServers).then(
      (answers) => {
        if (!answers.length)
          return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
        if (
          answers.some(
            (a) => !addressAllowed(a.address, policy.allowLoopback) || (loopbackOnly && !isLoopback(a.address)),
          )
        ) {
          onRefused();
          return callback(new OutboundError('destination_not_allowed', 'the destination is not allowed'), '', 4);
        }
        const wanted =
          options.family === 4 || options.family === 6 ? answers.filter((a) => a.family === options.family) : answers;
        if (options.all) return callback(null, wanted);
        const first = wanted[0] ?? answers[0]!;
        callback(null, first.address, first.family);
      },
      (error) => callback(error as Error, '', 4),
    );
  }) as unknown as LookupFunction;
}

export interface FetchOptions {
  policy: OutboundPolicy;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Accept the response's media type (`text/html`), else `unsupported_content`. */
  accept: (mediaType: string) => boolean;
  headers?: Record<string, string>;
}

export interface Fetched {
  finalUrl: string;
  mediaType: string;
  contentType: string;
  body: Buffer;
}

/** The URL checks before any connection: scheme, port, a literal address. */
export function checkUrl(url: URL, policy: OutboundPolicy): { loopbackOnly: boolean } {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundError('destination_not_allowed', 'only http and https URLs');
  if (url.username || url.password)
    throw new OutboundError('destination_not_allowed', 'URLs with credentials are not fetched');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const standard = port === 80 || port === 443;
  if (!standard && !policy.allowLoopback) throw new OutboundError('destination_not_allowed', 'only ports 80 and 443');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) {
    if (!addressAllowed(host, policy.allowLoopback) || (!standard && !isLoopback(host)))
      throw new OutboundError('destination_not_allowed', 'the destination is not allowed');
  }
  return { loopbackOnly: !standard };
}

/** GET `url` through the guard, following checked redirects; the body decompressed, within the limits. */
export async function guardedFetch(rawUrl: string, options: FetchOptions): Promise<Fetched> {
  const deadline = Date.now() + options.timeoutMs;
  let url = new URL(rawUrl);
  for (let hop = 0; ; hop++) {
    const { loopbackOnly } = checkUrl(url, options.policy);
    const response = await requestOnce(url, options, loopbackOnly, deadline);
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400 && response.headers.location) {
      response.destroy();
      if (hop >= options.maxRedirects)
        throw new OutboundError('fetch_failed', `more than ${options.maxRedirects} redirects`);
      try {
        url = new URL(response.headers.location, url);
      } catch {
        throw new OutboundError('fetch_failed', 'a redirect to an invalid URL');
      }
      continue;
    }
    if (status < 200 || status >= 300) {
      response.destroy();
      throw new OutboundError('fetch_failed', `the destination answered ${status}`);
    }
    const contentType = String(response.headers['content-type'] ?? '');
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    if (!options.accept(mediaType)) {
      response.destroy();
      throw new OutboundError('unsupported_content', `unsupported content type ${mediaType || '(none)'}`);
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > options.maxBytes && !response.headers['content-encoding']) {
      response.destroy();
      throw new OutboundError('too_large', `more than ${options.maxBytes} bytes`);
    }
    const body = await readBody(response, options.maxBytes, deadline);
    return { finalUrl: url.toString(), mediaType, contentType, body };
  }
}

function requestOnce(
  url: URL,
  options: FetchOptions,
  loopbackOnly: boolean,
  deadline: number,
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    let refused = false;
    const lookup = guardedLookup(options.policy, loopbackOnly, () => {
      refused = true;
    });
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'GET',
      agent: false,
      lookup,
      headers: {
        'user-agent': 'orchard-link-preview/1.0',
        accept: '*/*',
        'accept-encoding': 'gzip, deflate, br',
        ...options.headers,
      },
    });
    const timer = setTimeout(
      () => request.destroy(new OutboundError('timeout', 'the destination took too long')),
      Math.max(0, deadline - Date.now()),
    );
    request.on('response', (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    request.on('error', (error) => {
      clearTimeout(timer);
      if (refused) reject(new OutboundError('destination_not_allowed', 'the destination is not allowed'));
      else if (error instanceof OutboundError) reject(error);
      else reject(new OutboundError('fetch_failed', 'the destination could not be reached'));
    });
    request.end();
  });
}

function readBody(response: IncomingMessage, maxBytes: number, deadline: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const encoding = String(response.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    let stream: NodeJS.ReadableStream & { destroy(error?: Error): void } = response;
    if (encoding === 'gzip' || encoding === 'x-gzip') stream = response.pipe(zlib.createGunzip());
    else if (encoding === 'deflate') stream = response.pipe(zlib.createInflate());
    else if (encoding === 'br') stream = response.pipe(zlib.createBrotliDecompress());
    else if (encoding !== 'identity' && encoding !== '') {
      response.destroy();
      return reject(new OutboundError('unsupported_content', `unsupported content encoding ${encoding}`));
    }
    const parts: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: OutboundError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        response.destroy();
        if (stream !== response) stream.destroy();
        reject(error);
      } else resolve(Buffer.concat(parts));
    };
    const timer = setTimeout(
      () => finish(new OutboundError('timeout', 'the destination took too long')),
      Math.max(0, deadline - Date.now()),
    );
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) return finish(new OutboundError('too_large', `more than ${maxBytes} bytes`));
      parts.push(chunk);
    });
    stream.on('end', () => finish(null));
    stream.on('error', () => finish(new OutboundError('fetch_failed', 'the response could not be read')));
    response.on('aborted', () => finish(new OutboundError('fetch_failed', 'the response was cut short')));
  });
}

/**
 * A URL kept to be used later (a push endpoint), checked when it is given: the URL checks, then
 * every answer its name has now. Each later connection is checked again in its own lookup.
 */
export async function checkDestination(url: URL, policy: OutboundPolicy): Promise<void> {
  const { loopbackOnly } = checkUrl(url, policy);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) return;
  let answers: Answer[];
  try {
    answers = await resolveAll(host, policy.dnsServers);
  } catch {
    throw new OutboundError('fetch_failed', "the destination's name does not resolve");
  }
  if (!answers.length) throw new OutboundError('fetch_failed', "the destination's name does not resolve");
  if (
    answers.some((a) => !addressAllowed(a.address, policy.allowLoopback) || (loopbackOnly && !isLoopback(a.address)))
  ) {
    throw new OutboundError('destination_not_allowed', 'the destination is not allowed');
  }
}

export interface SendOptions {
  policy: OutboundPolicy;
  method: string;
  headers: Record<string, string | number>;
  body: Buffer | null;
  timeoutMs: number;
  /** The most of the answer's body kept (the rest is read and dropped). */
  maxBytes: number;
}

/** One request through the guard, no redirect followed: the status and (the start of) the answer. */
export async function guardedSend(rawUrl: string, options: SendOptions): Promise<{ status: number; body: Buffer }> {
  const url = new URL(rawUrl);
  const { loopbackOnly } = checkUrl(url, options.policy);
  const deadline = Date.now() + options.timeoutMs;
  return new Promise((resolve, reject) => {
    let refused = false;
    const lookup = guardedLookup(options.policy, loopbackOnly, () => {
      refused = true;
    });
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, { method: options.method, agent: false, lookup, headers: options.headers });
    const timer = setTimeout(
      () => request.destroy(new OutboundError('timeout', 'the destination took too long')),
      Math.max(0, deadline - Date.now()),
    );
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size < options.maxBytes) parts.push(chunk.subarray(0, options.maxBytes - size));
        size += chunk.length;
      });
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(parts) });
      });
      response.on('error', () => {
        clearTimeout(timer);
        reject(new OutboundError('fetch_failed', 'the response could not be read'));
      });
    });
    request.on('error', (error) => {
      clearTimeout(timer);
      if (refused) reject(new OutboundError('destination_not_allowed', 'the destination is not allowed'));
      else if (error instanceof OutboundError) reject(error);
      else reject(new OutboundError('fetch_failed', 'the destination could not be reached'));
    });
    request.end(options.body ?? undefined);
  });
}
