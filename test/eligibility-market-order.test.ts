/**
 * Two markets of one pair (same exchange, base coin, instrument type and quote COIN id, two
 * quote symbols): the pair's market data started with the earlier one. Whether a report by
 * quoteCoinId is eligible must not depend on the order the markets were loaded in.
 */
import { afterEach, describe, expect, it } from "vitest";
import { loadFixture } from "../src/services/fixtures.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { baseFixture, v2Record } from "./helpers/fixture.js";
import { listedOn, submitOk } from "./helpers/submission.js";

const TODAY = "2025-06-15";
const EARLY = {
  exchangeId: "kraken",
  baseCoinId: "uniswap",
  quoteCoinId: "tether",
  quoteSymbol: "USDT",
  instrumentType: "spot" as const,
  collectedSince: "2024-01-01",
};
// The same pair listed again under another ticker symbol, first seen later.
const LATE = { ...EARLY, quoteSymbol: "USDT.E", collectedSince: "2025-01-01" };

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A report by quoteCoinId on kraken, with `markets` loaded in that order: its eligibility. */
async function eligibilityWith(markets: (typeof EARLY)[]) {
  const fixture = baseFixture();
  fixture.markets.push(...markets);
  t = await startTestApp({ fixture, now: () => new Date(`${TODAY}T12:00:00Z`) });
  await submitOk(t, 2, [
    v2Record({
      date: "2024-06-01",
      exchangeId: "kraken",
      baseCoinId: "uniswap",
      quoteCoinId: "tether",
    }),
  ]);
  return listedEligibility();
}

async function listedEligibility() {
  const item = await listedOn(t as TestApp, "2024-06-01", { exchangeId: "kraken" });
  return [item.eligibilityStatus, item.eligibilityReason];
}

describe("eligibility of a report whose quote coin has two markets on the exchange", () => {
  it("is eligible with the earlier market loaded first", async () => {
    expect(await eligibilityWith([EARLY, LATE])).toEqual(["eligible", null]);
  });
  it("is eligible with the later market loaded first: the same data, the same answer", async () => {
    expect(await eligibilityWith([LATE, EARLY])).toEqual(["eligible", null]);
  });
});

describe("the same report after market data moves the pair's collection start EARLIER", () => {
  it("stays eligible (it turned ineligible: the updated row was read second)", async () => {
    expect(await eligibilityWith([EARLY, LATE])).toEqual(["eligible", null]);
    // Market data says collection of the USDT ticker began even earlier than thought.
    await loadFixture(
      (t as TestApp).database.stores,
      { markets: [{ ...EARLY, collectedSince: "2023-12-31" }] },
      new Date(`${TODAY}T12:00:00Z`),
    );
    expect(await listedEligibility()).toEqual(["eligible", null]);
  });
});
