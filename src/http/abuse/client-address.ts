import { isIPv6 } from "node:net";

/**
 * The budget key of a client address: an IPv4 address as is (also when IPv4-mapped), an IPv6
 * address by its /64 network, since one host commonly holds a whole /64 and could otherwise
 * take a fresh budget per address.
 */
export function addressBucket(address: string | undefined): string {
  if (address === undefined || address === "") return "unknown";
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1] !== undefined) return mapped[1];
  if (!isIPv6(address)) return address;
  return `${expandIPv6(address).slice(0, 4).join(":")}::/64`;
}

function expandIPv6(address: string): string[] {
  const [head = "", tail] = address.split("%")[0]?.split("::") ?? [""];
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros = Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0");
  return [...left, ...zeros, ...right].map((h) => h.toLowerCase().replace(/^0+(?=.)/, ""));
}
