/**
 * Which IP addresses the outbound client may connect to (the SSRF guard's core).
 *
 * Default-deny for anything that is not global unicast: a user-supplied URL (from_url, webhook
 * target, remote copy) must never reach the node itself, its private network or a cloud metadata
 * service. The lists are explicit CIDRs rather than ipaddr.js's range() names so a reviewer can see
 * exactly what is refused; ipaddr.js only parses and matches.
 */
import ipaddr from 'ipaddr.js';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;
export type Cidr = [Addr, number];

const cidrs = (list: string[]): Cidr[] => list.map((c) => ipaddr.parseCIDR(c));

/** IPv4 ranges that are not publicly routable (IANA special-purpose registry + metadata). */
const DENY_V4 = cidrs([
  '0.0.0.0/8', // "this network", incl. the unspecified 0.0.0.0 (Linux connects it to localhost)
  '10.0.0.0/8', // RFC 1918
  '100.64.0.0/10', // CGNAT, incl. Alibaba metadata 100.100.100.200
  '127.0.0.0/8', // loopback
  '169.254.0.0/16', // link-local, incl. AWS/GCP/Azure metadata 169.254.169.254
  '172.16.0.0/12', // RFC 1918
  '192.0.0.0/24', // IETF protocol assignments
  '192.0.2.0/24', // TEST-NET-1
  '192.88.99.0/24', // 6to4 relay anycast
  '192.168.0.0/16', // RFC 1918
  '198.18.0.0/15', // benchmarking
  '198.51.100.0/24', // TEST-NET-2
  '203.0.113.0/24', // TEST-NET-3
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved, incl. broadcast 255.255.255.255
]);

/** Only global unicast IPv6 may be reached; this excludes ::/8, fc00::/7, fe80::/10, ff00::/8 etc. */
const GLOBAL_V6 = ipaddr.parseCIDR('2000::/3');
const DENY_V6 = cidrs([
  '2001::/23', // IETF protocol assignments, incl. Teredo 2001::/32 (tunnels to arbitrary IPv4)
  '2001:db8::/32', // documentation
  '3fff::/20', // documentation
]);

/**
 * IPv6 forms that carry an IPv4 address the packet may end up at. The embedded IPv4 is checked
 * instead, so ::ffff:127.0.0.1 or 64:ff9b::a00:1 cannot smuggle a loopback/private target.
 */
function embeddedV4(a: ipaddr.IPv6): ipaddr.IPv4 | null {
  const p = a.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return v4(p[6]!, p[7]!); // ::ffff:a.b.c.d (mapped)
  if (zeros(0, 6)) return v4(p[6]!, p[7]!); // ::a.b.c.d (deprecated "compatible"); :: and ::1 too
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return v4(p[6]!, p[7]!); // NAT64 64:ff9b::/96
  if (p[0] === 0x2002) return v4(p[1]!, p[2]!); // 6to4 2002:AABB:CCDD::/48
  return null;
}

/** Parse an address literal; brackets (URL form) and IPv6 zone ids are tolerated. */
export function parseAddress(text: string): Addr | null {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : null;
}

const inAny = (a: Addr, list: Cidr[]) => list.some(([net, bits]) => net.kind() === a.kind() && a.match(net, bits));

/** True when `a` is a publicly routable address (before any allowlist is considered). */
export function isPublicAddress(a: Addr): boolean {
  if (a.kind() === 'ipv4') return !inAny(a, DENY_V4);
  const v6 = a as ipaddr.IPv6;
  const v4 = embeddedV4(v6);
  // :: and ::1 land in 0.0.0.0/8 this way, so they are refused too.
  if (v4) return isPublicAddress(v4);
  return inAny(v6, [GLOBAL_V6]) && !inAny(v6, DENY_V6);
}

/**
 * Parse the operator's allowlist (`STOWAGE_OUTBOUND_ALLOW`): comma-separated CIDRs; a bare address
 * means that single host. Throws a plain Error naming the bad entry: this is a start-up config
 * error, not a request error.
 */
export function parseAllowList(input: string | string[]): Cidr[] {
  const items = (Array.isArray(input) ? input : input.split(',')).map((s) => s.trim()).filter(Boolean);
  return items.map((item) => {
    try {
      if (item.includes('/')) return ipaddr.parseCIDR(item);
      const a = ipaddr.parse(item);
      return [a, a.kind() === 'ipv4' ? 32 : 128] as Cidr;
    } catch {
      throw new Error(`Outbound allowlist: "${item}" is not a valid CIDR (expected e.g. 127.0.0.0/8 or ::1/128)`);
    }
  });
}

/** The policy the outbound client applies to every address it is about to connect to. */
export class AddressPolicy {
  constructor(private readonly allow: Cidr[] = []) {}

  /** Allowed when public, or when the operator allowlisted it (allowlist wins over the deny lists). */
  allows(address: string | Addr): boolean {
    const a = typeof address === 'string' ? parseAddress(address) : address;
    if (!a) return false; // not an address at all: never connect to it
    // Match the allowlist against both the raw and the IPv4 form, so 127.0.0.0/8 also covers ::ffff:127.0.0.1.
    const forms: Addr[] = [a];
    if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) forms.push((a as ipaddr.IPv6).toIPv4Address());
    if (forms.some((f) => inAny(f, this.allow))) return true;
    return isPublicAddress(a);
  }
}
