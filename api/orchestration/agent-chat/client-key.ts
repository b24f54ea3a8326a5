// Whom the public chat's per-client limit counts (spec: public chat rules 6 and 7): what the
// server observes, never the body.
//
// - Default: the TCP peer address. IPv6 callers count by their /64 (one subscriber's whole
//   prefix is one bucket); an IPv4-mapped IPv6 peer (::ffff:1.2.3.4) counts as its IPv4 address.
// - ORCH_TRUSTED_PROXY_HEADER names the one forwarding header read: `x-forwarded-for` or
//   `x-real-ip`; unset, none is trusted.
// - X-Forwarded-For: the entries of every header line in order (node joins repeated lines with
//   commas); the limiter reads exactly the last ORCH_TRUSTED_PROXY_HOPS of them and the client is
//   the leftmost of those (the address the outermost trusted proxy saw). When one of those
//   entries is not an address, the peer counts. Hops 0: every visitor shares one bucket. Hops
//   larger than the real proxy count reach entries the caller wrote (the spec's "hands the key to
//   the caller"); with fewer entries than hops, the leftmost entry counts.
// - X-Real-IP: its (last) value when it is an address, else the peer.

import { isIP } from 'node:net';
import type { PublicChatConfig } from '../../../infra/config.ts';

const SHARED_BUCKET = 'all';

/** An address as a header or socket gives it, without brackets, port or zone: null when it is not one. */
export function parseAddress(entry: string): string | null {
  let text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  text = text.split('%')[0]!;
  return isIP(text) ? text : null;
}

/** The first four groups of an IPv6 address (the /64 prefix), canonical lower-case hex. */
export function ipv6Prefix64(address: string): string {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

/** The limiter's key of one address: IPv4 as is, IPv4-mapped as IPv4, IPv6 by /64. */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  return isIP(address) === 6 ? ipv6Prefix64(address) : address;
}

export function clientKey(
  peer: string | undefined,
  header: string | undefined,
  config: Pick<PublicChatConfig, 'trustedProxyHeader' | 'trustedProxyHops'>,
): string {
  const fromPeer = () => {
    const address = peer ? parseAddress(peer) : null;
    return address ? addressKey(address) : 'unknown-peer';
  };
  if (config.trustedProxyHeader === null) return fromPeer();
  if (config.trustedProxyHeader === 'x-real-ip') {
    const value = header?.split(',').at(-1);
    const address = value ? parseAddress(value) : null;
    return address ? addressKey(address) : fromPeer();
  }
  if (config.trustedProxyHops === 0) return SHARED_BUCKET;
  const entries = (header ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return fromPeer();
  const read = entries.slice(-config.trustedProxyHops);
  const addresses = read.map(parseAddress);
  if (addresses.some((a) => a === null)) return fromPeer();
  return addressKey(addresses[0]!);
}
