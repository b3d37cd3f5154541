import type { Fixture } from "../../src/schemas/fixture.js";
import { baseFixture } from "./fixture.js";

export const READER_KEYS = {
  chainlinkLabs: "chainlink-labs-key-0123456789abcdef0123",
  chainlinkLabsRevoked: "chainlink-labs-old-key-0123456789abcdef",
  uniswapLabs: "uniswap-labs-key-0123456789abcdef01234",
  operator: "operator-key-0123456789abcdef0123456789",
};

/**
 * The base fixture plus readers: a project owning chainlink (with a revoked key too), a
 * project owning uniswap, and the operator.
 */
export function accountabilityFixture(): Fixture {
  const fixture = baseFixture();
  fixture.organizations.push(
    {
      id: "chainlink-labs",
      name: "Chainlink Labs",
      kind: "project",
      coins: ["chainlink"],
      apiKeys: [
        READER_KEYS.chainlinkLabs,
        { key: READER_KEYS.chainlinkLabsRevoked, revoked: true },
      ],
      engagements: [],
    },
    {
      id: "uniswap-labs",
      name: "Uniswap Labs",
      kind: "project",
      coins: ["uniswap"],
      apiKeys: [READER_KEYS.uniswapLabs],
      engagements: [],
    },
    {
      id: "platform",
      name: "The Platform",
      kind: "operator",
      apiKeys: [READER_KEYS.operator],
      engagements: [],
    },
  );
  return fixture;
}
