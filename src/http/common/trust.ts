/** Whether a request arrived over HTTPS (TLS on our socket, or a trusted proxy said so), or from this machine. */
import ipaddr from 'ipaddr.js';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';

export type ProxyMatcher = (address: string | undefined) => boolean;

export function proxyMatcher(entries: string[]): ProxyMatcher {
  const ranges = entries.map((e) => {
    try {
      return e.includes('/') ? ipaddr.parseCIDR(e) : ([ipaddr.parse(e), ipaddr.parse(e).kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number]);
    } catch {
      throw new Error(`invalid trusted proxy address or CIDR: ${e}`);
    }
  });
  return (address) => {
    if (!address || ranges.length === 0) return false;
    let ip: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      ip = ipaddr.process(address);
    } catch {
      return false;
    }
    return ranges.some(([net, bits]) => ip.kind() === net.kind() && ip.match(net, bits));
  };
}

export function isSecure(req: IncomingMessage, trusted: ProxyMatcher): boolean {
  if ((req.socket as TLSSocket).encrypted) return true;
  if (!trusted(req.socket.remoteAddress)) return false;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  return first === 'https';
}

/** Headers a proxy adds: a loopback peer that sends any of them relays someone else's request. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'x-real-ip'];

/**
 * A connection from this very machine that no proxy relayed: the peer is a loopback address and the
 * request carries no forwarding header. (A reverse proxy on the same host passing public traffic
 * over plain HTTP connects from loopback too; its X-Forwarded-* headers tell it apart.)
 */
export function isDirectLoopback(req: IncomingMessage): boolean {
  const address = req.socket.remoteAddress;
  if (!address) return false;
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return false;
  }
  if (ip.range() !== 'loopback') return false;
  return !FORWARDING_HEADERS.some((h) => req.headers[h] !== undefined);
}
