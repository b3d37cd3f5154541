import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Caller } from "../src/domain/caller.js";
import type { Services } from "../src/services/index.js";
import {
  type DashboardWorld,
  dashboardWorld,
  FLAGGED,
  MARKET_A,
  MARKET_B_BID,
  WORLD_DAYS,
} from "./helpers/dashboard-world.js";
import { v2Record } from "./helpers/fixture.js";

let world: DashboardWorld;
let pages: Services["dashboardPages"];
beforeAll(async () => {
  world = await dashboardWorld();
  pages = world.t.services.dashboardPages;
}, 60_000);
afterAll(async () => world?.t.close());

const acme: Caller = { organizationId: "acme", apiKeyId: null, kind: "market_maker", coins: [] };
const globex: Caller = { ...acme, organizationId: "globex" };
const chainlinkLabs: Caller = {
  organizationId: "chainlink-labs",
  apiKeyId: null,
  kind: "project",
  coins: ["chainlink"],
};
const operator: Caller = {
  organizationId: "platform",
  apiKeyId: null,
  kind: "operator",
  coins: [],
};

const marketA = {
  organizationId: "acme",
  baseCoinId: "chainlink",
  exchangeId: "binance",
  quote: "tether",
  instrumentType: "spot" as const,
};

describe("the market page's data", () => {
  it.each([
    ["the market maker", acme],
    ["the project", chainlinkLabs],
    ["the operator", operator],
  ])("gives %s one point per reported day, with the thresholds of each day's period", async (_, caller) => {
    const page = await pages.market(caller, marketA, {});
    expect(page.dateGte).toBe("2024-12-09");
    expect(page.dateLte).toBe("2025-03-08");
    expect(page.dates).toEqual(WORLD_DAYS);
    const depth200 = page.charts.find((c) => c.id === "depth-200");
    expect(depth200?.series.map((s) => s.label)).toEqual([
      "Bid depth",
      "Ask depth",
      "Minimum bid depth",
      "Minimum ask depth",
    ]);
    expect(depth200?.series[0]?.values).toEqual(MARKET_A.bidDepth200);
    expect(depth200?.series[1]?.values).toEqual(MARKET_A.askDepth200);
    expect(depth200?.series[2]?.values).toEqual(MARKET_A.minBidDepth200);
    const spread = page.charts.find((c) => c.id === "spread");
    expect(spread?.series[0]?.values).toEqual(MARKET_A.bidAskSpread);
    expect(spread?.series[1]?.values).toEqual(Array(8).fill(0.5));
    // No KPI on the other bands: no threshold line.
    expect(page.charts.find((c) => c.id === "depth-tob")?.series).toHaveLength(2);
    // The other metrics a KPI may judge, as reported (no period here sets their KPIs).
    const reported = v2Record();
    const topOfBook = page.charts.find((c) => c.id === "top-of-book");
    expect(topOfBook?.series.map((s) => s.label)).toEqual(["Time at top of book"]);
    expect(topOfBook?.series[0]?.values).toEqual(Array(8).fill(reported.topOfBookPercentage));
    const fills = page.charts.find((c) => c.id === "fill-volume");
    expect(fills?.series.map((s) => s.label)).toEqual(["Maker fills", "Taker fills"]);
    expect(fills?.series[0]?.values).toEqual(Array(8).fill(reported.orderFillVolumeMaker));
    expect(page.flaggedDays).toEqual([FLAGGED]);
  });

  it("leaves a gap (null) on a day without a report, between the first reported day and the last", async () => {
    const page = await pages.market(acme, { ...marketA, exchangeId: "kraken", quote: "USD" }, {});
    expect(page.dates).toEqual(WORLD_DAYS);
    expect(page.reportedDays).toBe(7);
    const depth200 = page.charts.find((c) => c.id === "depth-200");
    expect(depth200?.series[0]?.values).toEqual(MARKET_B_BID);
    // The threshold holds on that day all the same.
    expect(depth200?.series[2]?.values[3]).toBe(5000);
  });

  it("spans the range's owed days, so that days missing before the first report and after the last are gaps", async () => {
    // globex owes market A from 2025-03-01 and missed 2025-03-02.
    const globexA = { ...marketA, organizationId: "globex" };
    const bid = async (dateGte: string, dateLte: string) => {
      const page = await pages.market(globex, globexA, { dateGte, dateLte });
      const depth200 = page.charts.find((c) => c.id === "depth-200");
      return { dates: page.dates, bid: depth200?.series[0]?.values, min: depth200?.series[2] };
    };
    const trailing = await bid("2025-03-01", "2025-03-02");
    expect(trailing.dates).toEqual(["2025-03-01", "2025-03-02"]);
    expect(trailing.bid).toEqual([10000, null]);
    const leading = await bid("2025-03-02", "2025-03-03");
    expect(leading.dates).toEqual(["2025-03-02", "2025-03-03"]);
    expect(leading.bid).toEqual([null, 10000]);
    // No report at all in the range: its days and thresholds all the same.
    const none = await bid("2025-03-02", "2025-03-02");
    expect(none.dates).toEqual(["2025-03-02"]);
    expect(none.min?.values).toEqual([5000]);
    // Before the obligation's first day and after today (2025-03-09): not drawn.
    expect((await bid("2025-02-01", "2025-03-31")).dates).toEqual([...WORLD_DAYS, "2025-03-09"]);
  });

  it("is not found for another market maker or a project of another coin", async () => {
    await expect(pages.market(globex, marketA, {})).rejects.toThrow("Market not found");
    await expect(
      pages.market(chainlinkLabs, { ...marketA, baseCoinId: "uniswap" }, {}),
    ).rejects.toThrow("Market not found");
  });

  it("refuses a range over two years", async () => {
    await expect(
      pages.market(acme, marketA, { dateGte: "2023-03-01", dateLte: "2025-03-08" }),
    ).rejects.toThrow("must not exceed 731 days");
  });
});

describe("the calendar's data", () => {
  it("marks each day of each obligation market", async () => {
    const page = await pages.calendar(
      chainlinkLabs,
      { organizationId: "acme", baseCoinId: "chainlink" },
      {},
    );
    const [a, b] = page.markets;
    expect(a?.counts).toEqual({
      met: 6,
      missed: 1,
      missing: 0,
      late: 0,
      ineligible: 1,
      pending: 1,
    });
    expect(b?.counts).toEqual({
      met: 6,
      missed: 0,
      missing: 1,
      late: 1,
      ineligible: 0,
      pending: 1,
    });
    expect(b?.days.find((d) => d.date === "2025-03-04")?.status).toBe("missing");
    expect(b?.days.find((d) => d.date === "2025-03-06")).toMatchObject({
      status: "met",
      late: true,
    });
    expect(a?.days.find((d) => d.date === "2025-03-06")?.failedKpis).toEqual(["minBidDepth200"]);
  });
});

describe("the coin pages' data", () => {
  it("puts the coin's market makers side by side", async () => {
    const page = await pages.coin(chainlinkLabs, "chainlink", {});
    expect(page.makers).toEqual([
      {
        organizationId: "acme",
        organizationName: "Acme Market Making",
        markets: 2,
        daysDue: 14,
        daysMet: 12,
        daysMissing: 1,
        daysLate: 1,
        daysFlagged: 1,
        compliance: 0.8571,
        bidDepth200: 6700,
        askDepth200: 7070,
        bidAskSpread: 0.17,
      },
      {
        organizationId: "globex",
        organizationName: "Globex Liquidity",
        markets: 1,
        daysDue: 7,
        daysMet: 5,
        daysMissing: 1,
        daysLate: 0,
        daysFlagged: 0,
        compliance: 0.7143,
        bidDepth200: 10000,
        askDepth200: 11000,
        bidAskSpread: 0.2,
      },
    ]);
  });

  it("drills down to one market maker's markets", async () => {
    const page = await pages.maker(
      chainlinkLabs,
      { organizationId: "acme", baseCoinId: "chainlink" },
      {},
    );
    expect(
      page.markets.map((m) => [m.exchangeId, m.daysMet, m.daysFlagged, m.bidDepth200]),
    ).toEqual([
      ["binance", 6, 1, 6300],
      ["kraken", 6, 0, 8004],
    ]);
    expect(page.maker.daysFlagged).toBe(1);
  });

  it("lists a project's own coins and refuses another's", async () => {
    expect((await pages.coins(chainlinkLabs)).map((c) => c.id)).toEqual(["chainlink"]);
    expect((await pages.coins(operator)).map((c) => c.id)).toEqual(["chainlink", "uniswap"]);
    await expect(pages.coin(chainlinkLabs, "uniswap", {})).rejects.toThrow("Coin not found");
    await expect(
      pages.maker(chainlinkLabs, { organizationId: "acme", baseCoinId: "uniswap" }, {}),
    ).rejects.toThrow("Market maker not found");
  });
});
