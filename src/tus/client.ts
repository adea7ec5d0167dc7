/**
 * Which client a tus upload counts against (docs/tus.md, "Limits"): the request's address as the
 * Upload server sees it (`req.ip`: the peer, or the X-Forwarded-For client when the peer is a
 * trusted proxy). An IPv6 client counts by its /64: one subscriber line or host is usually given a
 * whole /64, so its addresses are one client, not 2^64 of them.
 */
import ipaddr from 'ipaddr.js';

export function clientGroup(address: string): string {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // process(): an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is its IPv4 address.
    ip = ipaddr.process(address);
  } catch {
    return address.slice(0, 64);
  }
  if (ip.kind() === 'ipv4') return ip.toString();
  const parts = (ip as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}
