import { describe, expect, it } from "vitest";
import { forbiddenAddress } from "../src/domain/webhook-target.js";

/** Target safety (CONTRACT section 7) address by address: only public ones may be called. */
describe("forbiddenAddress", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["10.0.0.1", "private"],
    ["169.254.169.254", "cloud metadata"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["192.0.2.1", "documentation"],
    ["::1", "IPv6 loopback"],
    ["::", "unspecified"],
    ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
    ["::ffff:0:a00:1", "IPv4-translated (SIIT) 10.0.0.1"],
    ["::ffff:0:808:808", "IPv4-translated 8.8.8.8: never routed"],
    ["64:ff9b::7f00:1", "NAT64 of 127.0.0.1"],
    ["64:ff9b:1::7f00:1", "local-use NAT64 (RFC 8215)"],
    ["2002:7f00:1::", "6to4 of 127.0.0.1"],
    ["2001::1", "Teredo"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation (RFC 9637)"],
    ["5f00::1", "SRv6 (RFC 9602)"],
    ["100::1", "discard-only"],
    ["100:0:0:1::1", "dummy prefix (RFC 9780)"],
    ["fd00::1", "unique local"],
    ["fe80::1", "link-local"],
    ["ff02::1", "multicast"],
  ])("refuses %s (%s)", (address) => {
    expect(forbiddenAddress(address)).toBe(`${address} is not a public address`);
  });

  it.each([
    ["93.184.215.14"],
    ["2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    ["::ffff:93.184.215.14"],
    ["64:ff9b::5db8:d70e"],
    ["2002:5db8:d70e::1"],
    ["2620:4f:8000::1"],
  ])("takes the public address %s", (address) => {
    expect(forbiddenAddress(address)).toBeNull();
  });
});
