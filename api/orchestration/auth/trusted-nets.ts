// Which TCP peers may assert identity headers (forward-auth): CIDR lists over node's BlockList.
// IPv4-mapped IPv6 peers (::ffff:10.0.0.1) are matched as the IPv4 address they carry.

import { BlockList, isIP } from 'node:net';

export function normalisePeer(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

export function trustedNets(
  cidrs: string[],
  variable = 'ORCH_FORWARD_AUTH_TRUSTED_NETS',
): (peer: string | undefined) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [net, bits, extra] = cidr.split('/');
    const family = isIP(net ?? '');
    const prefix = bits === undefined ? (family === 6 ? 128 : 32) : Number(bits);
    if (
      !family ||
      extra !== undefined ||
      !Number.isInteger(prefix) ||
      prefix < 0 ||
      prefix > (family === 6 ? 128 : 32)
    ) {
      throw new Error(`${variable}: not a CIDR: ${cidr}`);
    }
    list.addSubnet(normalisePeer(net!), prefix, family === 6 && !/^::ffff:\d/i.test(net!) ? 'ipv6' : 'ipv4');
  }
  return (peer) => {
    if (!peer) return false;
    const address = normalisePeer(peer);
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}
