import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { periodsOutsideEngagements } from "../src/domain/obligation-rules.js";
import { createAdminServices } from "../src/services/admin.js";
import { loadFixture } from "../src/services/fixtures.js";
import { accountabilityFixture, READER_KEYS } from "./helpers/accountability.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

/**
 * A period lies inside its engagement (CONTRACT section 4): an engagement that ends earlier
 * than its obligation periods, whichever way (`engagement end`, the same `since` added with an
 * earlier end, a fixture loaded again), ends the period running past the new end on it and
 * removes those that start after it, so that no reader is shown a period nobody was engaged for.
 */

describe("periodsOutsideEngagements", () => {
  const engagements = [
    { baseCoinId: "chainlink", since: "2025-01-01", until: "2025-05-31" },
    { baseCoinId: "chainlink", since: "2025-09-01", until: null },
    { baseCoinId: "uniswap", since: "2025-01-01", until: null },
  ];
  const period = (baseCoinId: string, since: string, until: string | null) => ({
    baseCoinId,
    since,
    until,
  });

  it("leaves periods inside an engagement, ends one past its end, removes one after it", () => {
    const inside = period("chainlink", "2025-01-01", "2025-04-30");
    const across = period("chainlink", "2025-05-01", "2025-08-31");
    const after = period("chainlink", "2025-06-01", "2025-06-30");
    const laterEngagement = period("chainlink", "2025-09-01", null);
    const otherCoin = period("uniswap", "2025-03-01", null);
    const neverEngaged = period("aave", "2025-01-01", null);
    expect(
      periodsOutsideEngagements(
        [inside, across, after, laterEngagement, otherCoin, neverEngaged],
        engagements,
      ),
    ).toEqual([
      { period: across, endsOn: "2025-05-31" },
      { period: after, removed: true },
      { period: neverEngaged, removed: true },
    ]);
  });

  it("ends an open period on its engagement's end", () => {
    const open = period("chainlink", "2025-03-01", null);
    expect(periodsOutsideEngagements([open], engagements)).toEqual([
      { period: open, endsOn: "2025-05-31" },
    ]);
  });
});

let t: TestApp;
let admin: ReturnType<typeof createAdminServices>;
beforeAll(async () => {
  t = await startTestApp({ fixture: accountabilityFixture() });
  admin = createAdminServices(t.database.stores, {
    coinGecko: () => {
      throw new Error("no CoinGecko in this test");
    },
  });
});
afterAll(async () => t?.close());

const MARKETS = [{ exchangeId: "binance", quote: "tether", instrumentType: "spot" }];
const setPeriods = async (
  organizationId: string,
  coin: string,
  spans: [string, string | null][],
) => {
  for (const [since, until] of spans)
    await admin.obligations.set(organizationId, coin, {
      since,
      until,
      markets: MARKETS,
      kpis: { minBidDepth200: 5000 },
    });
};

/** The periods a key reads through GET /api/v1/obligations, as [since, until]. */
async function periodsRead(key: string, query: string): Promise<[string, string | null][]> {
  const response = await t.request({ url: `/api/v1/obligations?${query}`, key });
  expect(response.statusCode).toBe(200);
  return response
    .json()
    .items.map((p: { since: string; until: string | null }) => [p.since, p.until]);
}

describe("an engagement that ends earlier than its obligations", () => {
  it("ends the period running past the new end and removes those after it", async () => {
    await setPeriods("globex", "chainlink", [
      ["2025-01-01", "2025-04-30"],
      ["2025-05-01", "2025-08-31"],
      ["2025-09-01", null],
    ]);
    expect(await admin.endEngagement("globex", "chainlink", "2025-05-31")).toEqual({
      ended: 1,
      until: "2025-05-31",
      obligationsEnded: 1,
      obligationsRemoved: 1,
    });
    const after: [string, string | null][] = [
      ["2025-01-01", "2025-04-30"],
      ["2025-05-01", "2025-05-31"],
    ];
    for (const key of [READER_KEYS.chainlinkLabs, READER_KEYS.operator])
      expect(await periodsRead(key, "organizationId=globex")).toEqual(after);
    expect(await periodsRead(KEYS.globex, "baseCoinId=chainlink")).toEqual(after);
  });

  it("refuses an end before the engagement's start, or one it already ended by, saying which", async () => {
    // globex's chainlink engagement runs from 2024-01-01 (test/helpers/fixture.ts).
    await expect(admin.endEngagement("globex", "chainlink", "2023-12-31")).rejects.toThrow(
      "the engagement of 'globex' for 'chainlink' begins on 2024-01-01, after 2023-12-31: it cannot end before it begins",
    );
    await expect(admin.endEngagement("globex", "aave", "2025-05-31")).rejects.toThrow(
      "no engagement of 'globex' for 'aave' runs past 2025-05-31",
    );
  });

  it("does the same when the engagement is added again with an earlier end", async () => {
    await setPeriods("acme", "uniswap", [
      ["2025-01-01", "2025-06-30"],
      ["2025-07-01", null],
    ]);
    const shortened = await admin.addEngagement("acme", {
      baseCoinId: "uniswap",
      type: "exchange",
      since: "2024-01-01",
      until: "2025-03-31",
    });
    expect(shortened).toMatchObject({ obligationsEnded: 1, obligationsRemoved: 1 });
    expect(await periodsRead(KEYS.acme, "baseCoinId=uniswap")).toEqual([
      ["2025-01-01", "2025-03-31"],
    ]);
  });

  it("does the same when a fixture loaded again ends the engagement, then changes nothing", async () => {
    await setPeriods("acme", "chainlink", [["2025-02-01", null]]);
    const fixture = accountabilityFixture();
    const acme = fixture.organizations.find((o) => o.id === "acme");
    const chainlink = acme?.engagements.find((e) => e.baseCoinId === "chainlink");
    if (chainlink === undefined) throw new Error("fixture changed");
    chainlink.until = "2025-01-31";
    const stores = t.database.stores;
    expect((await loadFixture(stores, fixture, new Date())).changed).toBeGreaterThan(0);
    expect(await periodsRead(READER_KEYS.chainlinkLabs, "organizationId=acme")).toEqual([]);
    expect((await loadFixture(stores, fixture, new Date())).changed).toBe(0);
  });
});
