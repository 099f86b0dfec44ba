import { isIPv4, isIPv6 } from 'node:net';

/** An address block: the address's bytes (4 or 16) and how many leading bits it fixes. */
export interface Cidr {
  readonly text: string;
  readonly bytes: Uint8Array;
  readonly bits: number;
}

/** The 4 or 16 bytes of an IP address in text, or null when it is none. */
export function ipBytes(address: string): Uint8Array | null {
  const a = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (isIPv4(a)) return Uint8Array.from(a.split('.').map(Number));
  if (!isIPv6(a)) return null;
  const zoneless = a.split('%')[0]!;
  // An embedded dotted IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(zoneless);
  let text = zoneless;
  if (dotted) {
    const v4 = dotted[1]!.split('.').map(Number);
    text = zoneless.slice(0, -dotted[1]!.length) + `${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  if (groups.length !== 8) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    bytes[2 * i] = v >> 8;
    bytes[2 * i + 1] = v & 0xff;
  });
  return bytes;
}

/**
 * The IPv4 address an IPv6 address stands for, when it carries one that a connection ends up
 * at: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d).
 */
function embeddedIpv4(b: Uint8Array): Uint8Array | null {
  if (b.length !== 16) return null;
  const zeros = (from: number, to: number) => b.subarray(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return b.subarray(12);
  if (zeros(0, 12) && !zeros(12, 16) && !(zeros(12, 15) && b[15] === 1)) return b.subarray(12);
  if (b[0] === 0 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return b.subarray(12);
  return null;
}

/** `a.b.c.d/n` or `x::y/n` (a bare address is a block of one). */
export function parseCidr(text: string): Cidr {
  const t = text.trim();
  const [addr, len] = t.split('/');
  const bytes = ipBytes(addr ?? '');
  if (!bytes) throw new Error(`"${t}" is not an IP address or CIDR block`);
  const max = bytes.length * 8;
  const bits = len === undefined ? max : /^\d{1,3}$/.test(len) ? Number(len) : NaN;
  if (!(bits >= 0 && bits <= max)) throw new Error(`"${t}" has a prefix length outside 0..${max}`);
  return { text: t, bytes, bits };
}

export const parseCidrList = (text: string): Cidr[] => text.split(',').map((s) => s.trim()).filter(Boolean).map(parseCidr);

export function inCidr(bytes: Uint8Array, cidr: Cidr): boolean {
  if (bytes.length !== cidr.bytes.length) return false;
  for (let bit = 0; bit < cidr.bits; bit += 8) {
    const take = Math.min(8, cidr.bits - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    if ((bytes[bit / 8]! & mask) !== (cidr.bytes[bit / 8]! & mask)) return false;
  }
  return true;
}

/**
 * Where a webhook may never connect unless WEBHOOK_ALLOWED_CIDRS says otherwise: this host,
 * private networks, link-local (the cloud metadata address 169.254.169.254 among them), carrier
 * NAT, multicast, and the reserved, documentation and benchmarking blocks.
 */
export const REFUSED_RANGES: readonly { cidr: Cidr; why: string }[] = [
  ['0.0.0.0/8', '"this" network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'carrier-grade NAT'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local (cloud metadata)'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4 relay'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['100::/64', 'discard'],
  ['64:ff9b:1::/48', 'local NAT64'],
  ['2001:db8::/32', 'documentation'],
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
].map(([c, why]) => ({ cidr: parseCidr(c!), why: why! }));

/** The refused range this address lies in (`cidr` null: not an IP address), or null when it may be connected to. */
function refusedRange(address: string, allowed: readonly Cidr[]): { cidr: string | null; why: string } | null {
  const bytes = ipBytes(address);
  if (!bytes) return { cidr: null, why: 'not an IP address' };
  if (allowed.some((c) => inCidr(bytes, c))) return null;
  const v4 = embeddedIpv4(bytes);
  if (v4 && allowed.some((c) => inCidr(v4, c))) return null;
  for (const candidate of v4 ? [v4, bytes] : [bytes]) {
    const hit = REFUSED_RANGES.find((r) => inCidr(candidate, r.cidr));
    if (hit) return { cidr: hit.cidr.text, why: hit.why };
  }
  return null;
}

/** Why a connection to this address is refused, or null when it may be made. */
export function refusedAddress(address: string, allowed: readonly Cidr[]): string | null {
  const range = refusedRange(address, allowed);
  return range && describeRefusal(address, range);
}

const describeRefusal = (address: string, range: { cidr: string | null; why: string }): string =>
  range.cidr === null ? `${address} is ${range.why}` : `${address} is in ${range.cidr} (${range.why})`;

/** Whether the address lies inside WEBHOOK_ALLOWED_CIDRS (where plain http is allowed too). */
export function insideAllowed(address: string, allowed: readonly Cidr[]): boolean {
  const bytes = ipBytes(address);
  if (!bytes) return false;
  const v4 = embeddedIpv4(bytes);
  return allowed.some((c) => inCidr(bytes, c) || (v4 !== null && inCidr(v4, c)));
}

export interface DestinationRules {
  allowed: readonly Cidr[];
  allowHttp: boolean;
}

/**
 * The refusal of a destination whose host resolved to `addresses`, or null when every address
 * may be connected to. Every address is checked, not only the one used, so that a name that
 * resolves partly inside a refused range is refused as a whole.
 */
export function refusedDestination(url: URL, addresses: readonly string[], rules: DestinationRules): string | null {
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'only http(s) destinations are allowed';
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  if (addresses.length === 0) return `${url.hostname} does not resolve`;
  // A URL naming an address hears which range refuses it; a host name's addresses are not told
  // (they would let any caller map the names of our internal network).
  const literal = ipBytes(url.hostname.replace(/^\[|\]$/g, '')) !== null;
  for (const a of addresses) {
    const range = refusedRange(a, rules.allowed);
    if (range) return literal ? `the destination is a refused address: ${describeRefusal(a, range)}` : `the destination resolves to a refused address (${range.why})`;
  }
  if (url.protocol === 'http:' && !rules.allowHttp && !addresses.every((a) => insideAllowed(a, rules.allowed))) return 'https is required';
  return null;
}
