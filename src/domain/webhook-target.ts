import { isIPv4, isIPv6 } from "node:net";

/**
 * Target safety (CONTRACT section 7): a webhook may reach only public addresses, so that no
 * subscriber can make the service call into its own network (SSRF). These ranges are not
 * public: this host, private networks, link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT, documentation, benchmarking, multicast, reserved, unspecified, and in
 * IPv6 every range IANA's special-purpose registry marks as not globally reachable.
 */
const IPV4_BLOCKED: [string, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

/** IPv6 ranges as [first bits (as hex groups), prefix length]. */
const IPV6_BLOCKED: [number[], number][] = [
  [[0, 0, 0, 0, 0, 0], 96], // :: , ::1 and the deprecated IPv4-compatible ::a.b.c.d
  [[0, 0, 0, 0, 0xffff, 0], 96], // IPv4-translated ::ffff:0:a.b.c.d (SIIT), never routed
  [[0x64, 0xff9b, 1], 48], // local-use IPv4/IPv6 translation (RFC 8215)
  [[0x100, 0, 0, 0], 64], // discard-only
  [[0x100, 0, 0, 1], 64], // dummy prefix (RFC 9780)
  [[0x2001, 0xdb8], 32], // documentation
  [[0x3fff, 0], 20], // documentation (RFC 9637)
  [[0x2001, 0], 23], // IETF protocol assignments (Teredo, ORCHID…)
  [[0x5f00], 16], // SRv6 segment identifiers (RFC 9602)
  [[0xfc00], 7], // unique local
  [[0xfe80], 10], // link-local
  [[0xfec0], 10], // site-local (deprecated)
  [[0xff00], 8], // multicast
];

/** Why `address` (an IP literal) is no permitted target, or null when it is public. */
export function forbiddenAddress(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, "");
  if (isIPv4(bare)) return ipv4Blocked(bare) ? `${bare} is not a public address` : null;
  if (!isIPv6(bare)) return `${address} is not an IP address`;
  const groups = ipv6Groups(bare);
  const embedded = embeddedIpv4(groups);
  if (embedded !== null) return forbiddenAddress(embedded) === null ? null : blocked(bare);
  return IPV6_BLOCKED.some(([prefix, bits]) => inPrefix(groups, prefix, bits))
    ? blocked(bare)
    : null;
}

const blocked = (address: string) => `${address} is not a public address`;

function ipv4Number(address: string): number {
  return address.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function ipv4Blocked(address: string): boolean {
  const n = ipv4Number(address);
  return IPV4_BLOCKED.some(([base, bits]) => {
    const size = 2 ** (32 - bits);
    return Math.floor(n / size) === Math.floor(ipv4Number(base) / size);
  });
}

/** The 8 groups of an IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(address: string): number[] {
  let text = address.split("%")[0] ?? address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1] !== undefined) {
    const n = ipv4Number(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const part = (s: string) => (s === "" ? [] : s.split(":").map((g) => Number.parseInt(g, 16)));
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  return [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The IPv4 address an IPv6 one carries and reaches: IPv4-mapped (::ffff:a.b.c.d), NAT64
 * (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::); null for any other.
 */
function embeddedIpv4(g: number[]): string | null {
  const v4 = (hi: number, lo: number) => `${hi >>> 8}.${hi & 0xff}.${lo >>> 8}.${lo & 0xff}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return v4(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(g[6] ?? 0, g[7] ?? 0);
  if (g[0] === 0x2002) return v4(g[1] ?? 0, g[2] ?? 0);
  return null;
}

function inPrefix(groups: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i * 16 < bits; i++) {
    const take = Math.min(16, bits - i * 16);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((groups[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

/**
 * Why `url` may not be a webhook target, judging the URL alone (the host's addresses are
 * checked apart), or null. `allowInsecure` (WEBHOOK_ALLOW_INSECURE) admits `http://`.
 */
export function urlProblem(url: string, allowInsecure: boolean): string | null {
  // The URL parser would drop these silently, and the URL stored and shown would not be the
  // one delivered to.
  const controlOrSpace = (c: string) => c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f;
  if ([...url].some(controlOrSpace)) return "URL must not contain spaces or control characters";
  if (/^https?:(?!\/\/)/i.test(url)) return "URL must have // after its scheme";
  if (url.includes("#")) return "URL must not contain a fragment";
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "Invalid URL";
  }
  const schemes = allowInsecure ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(parsed.protocol))
    return allowInsecure ? "URL must be http(s)" : "URL must use https";
  if (parsed.username !== "" || parsed.password !== "") return "URL must not contain credentials";
  if (parsed.hash !== "") return "URL must not contain a fragment";
  // Nothing listens on port 0: every delivery to it would fail.
  if (parsed.port === "0") return "URL must not use port 0";
  return null;
}
