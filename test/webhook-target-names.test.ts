import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { targetProblem } from "../src/adapters/webhook-http.js";

/** Name resolution as a test decides it: every name resolves to `addresses`. */
const resolvingTo = (addresses: string[]) =>
  ((_host: string, _options: unknown, done: (e: null, a: LookupAddress[]) => void) =>
    done(
      null,
      addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
    )) as never;

describe("a webhook target named by host", () => {
  it("is refused when any address it resolves to is not public, saying which", async () => {
    const policy = { allowInsecure: false, lookup: resolvingTo(["93.184.215.14", "10.1.2.3"]) };
    expect(await targetProblem("https://hooks.example.com/x", policy)).toBe(
      "Host 'hooks.example.com' resolves to a forbidden address: 10.1.2.3 is not a public address",
    );
  });

  it("is accepted when every address is public", async () => {
    const policy = { allowInsecure: false, lookup: resolvingTo(["93.184.215.14"]) };
    expect(await targetProblem("https://hooks.example.com/x", policy)).toBeNull();
  });
});
