import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReferenceData } from "../src/domain/reference-data.js";
import { recomputeEligibility } from "../src/services/eligibility.js";
import { loadFixture } from "../src/services/fixtures.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { v1Record, v2Record } from "./helpers/fixture.js";
import { listedOn, submitOk } from "./helpers/submission.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const ELIGIBLE = { eligibilityStatus: "eligible", eligibilityReason: null };
const missing = (reason: string) => ({
  eligibilityStatus: "ineligible_market_data_missing",
  eligibilityReason: reason,
});

/** Adds reference data the way the sync or `seed` does, and tells the app. */
async function loadMarketData(fixture: Record<string, unknown>): Promise<void> {
  await loadFixture(t.database.stores, fixture, new Date());
  t.services.referenceData.invalidate();
}

describe("eligibility of a stored report", () => {
  it("a report matched with market data collected since before its date is eligible", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-08-01" })]);
    expect(await listedOn(t, "2024-08-01")).toMatchObject(ELIGIBLE);
  });

  it.each([
    ["an exchange without market data", "2024-08-11", "nodata", {}, "exchange_market_data_missing"],
    [
      "a base coin not traded there",
      "2024-08-12",
      "kraken",
      { baseCoinId: "uniswap", quoteCoinId: undefined, quoteCoinSymbol: "USD" },
      "base_not_traded",
    ],
    [
      "a base coin traded only as spot, for perp data",
      "2024-08-13",
      "binance_futures",
      { baseCoinId: "uniswap", instrumentType: "perp" },
      "base_not_traded",
    ],
    [
      "a pair that does not exist there",
      "2024-08-14",
      "binance",
      { quoteCoinId: "usd-coin" },
      "pair_not_found",
    ],
    [
      "a fiat pair that does not exist there",
      "2024-08-15",
      "kraken",
      { quoteCoinId: undefined, quoteCoinSymbol: "EUR" },
      "pair_not_found",
    ],
    [
      "a date before collection started for the pair",
      "2024-05-31",
      "binance_futures",
      { instrumentType: "perp" },
      "before_collection_start",
    ],
  ])("a report for %s is ineligible with its reason", async (_what, date, exchangeId, overrides, reason) => {
    await submitOk(t, 2, [v2Record({ date, exchangeId, ...overrides })]);
    expect(await listedOn(t, date)).toMatchObject({ exchangeId, ...missing(reason) });
  });

  it("a report dated on the first day of collection is eligible", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-06-01", instrumentType: "perp" })]);
    expect(await listedOn(t, "2024-06-01")).toMatchObject({
      exchangeId: "binance_futures",
      ...ELIGIBLE,
    });
  });

  it("an exchange without market data outranks every other reason", async () => {
    const record = { date: "2024-08-02", exchangeId: "nodata", baseCoinId: "uniswap" };
    await submitOk(t, 2, [v2Record({ ...record, quoteCoinId: "usd-coin" })]);
    expect(await listedOn(t, "2024-08-02")).toMatchObject(missing("exchange_market_data_missing"));
  });

  it("a symbol-only record is matched by the market's quote symbol, in any case", async () => {
    const record = { exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "usd" };
    await submitOk(t, 2, [v2Record({ date: "2024-08-03", ...record })]);
    expect(await listedOn(t, "2024-08-03")).toMatchObject({ quoteCoinSymbol: "USD", ...ELIGIBLE });
  });

  it("a symbol-only record for a crypto quote is matched by its symbol too", async () => {
    const record = { quoteCoinId: undefined, quoteCoinSymbol: "USDT" };
    await submitOk(t, 2, [v2Record({ date: "2024-08-04", ...record })]);
    expect(await listedOn(t, "2024-08-04")).toMatchObject(ELIGIBLE);
  });

  it("v1 reports get their eligibility the same way", async () => {
    await submitOk(t, 1, [
      v1Record({ date: "2024-08-05" }),
      v1Record({ date: "2024-08-06", exchangeId: "binance_futures" }),
      v1Record({ date: "2023-08-07", exchangeId: "binance_futures" }),
    ]);
    expect(await listedOn(t, "2024-08-05")).toMatchObject(ELIGIBLE);
    expect(await listedOn(t, "2024-08-06")).toMatchObject(ELIGIBLE);
    expect(await listedOn(t, "2023-08-07")).toMatchObject(missing("before_collection_start"));
  });
});

describe("recomputation when market data arrives", () => {
  it("a report of a base coin not traded turns eligible once its market is loaded", async () => {
    const record = { exchangeId: "kraken", baseCoinId: "uniswap", quoteCoinId: undefined };
    await submitOk(t, 2, [
      v2Record({ date: "2024-09-01", ...record, quoteCoinSymbol: "usd" }),
      v2Record({ date: "2023-09-01", ...record, quoteCoinSymbol: "USD" }),
    ]);
    expect(await listedOn(t, "2024-09-01")).toMatchObject(missing("base_not_traded"));

    await loadMarketData({
      markets: [
        {
          exchangeId: "kraken",
          baseCoinId: "uniswap",
          quoteSymbol: "usd",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
      ],
    });
    expect(await listedOn(t, "2024-09-01")).toMatchObject(ELIGIBLE);
    expect(await listedOn(t, "2023-09-01")).toMatchObject(missing("before_collection_start"));
    // New submissions see the new market at once.
    await submitOk(t, 2, [v2Record({ date: "2024-09-02", ...record, quoteCoinSymbol: "USD" })]);
    expect(await listedOn(t, "2024-09-02")).toMatchObject(ELIGIBLE);
  });

  it("a report of a missing pair turns eligible once the pair is loaded", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-09-03", quoteCoinId: "usd-coin" })]);
    expect(await listedOn(t, "2024-09-03")).toMatchObject(missing("pair_not_found"));
    await loadMarketData({
      markets: [
        {
          exchangeId: "binance",
          baseCoinId: "chainlink",
          quoteCoinId: "usd-coin",
          quoteSymbol: "USDC",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
      ],
    });
    expect(await listedOn(t, "2024-09-03")).toMatchObject(ELIGIBLE);
  });

  it("a report dated before collection start turns eligible when collection is backdated", async () => {
    const perp = { exchangeId: "binance_futures", instrumentType: "perp" };
    await submitOk(t, 2, [v2Record({ date: "2024-03-15", ...perp })]);
    expect(await listedOn(t, "2024-03-15")).toMatchObject(missing("before_collection_start"));
    await loadMarketData({
      markets: [
        {
          exchangeId: "binance_futures",
          baseCoinId: "chainlink",
          quoteCoinId: "tether",
          quoteSymbol: "USDT",
          instrumentType: "perp",
          collectedSince: "2024-03-01",
        },
      ],
    });
    expect(await listedOn(t, "2024-03-15")).toMatchObject(ELIGIBLE);
  });

  it("a report on an exchange without market data turns eligible once it is collected", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-09-05", exchangeId: "nodata" })]);
    const item = () => listedOn(t, "2024-09-05", { exchangeId: "nodata" });
    expect(await item()).toMatchObject(missing("exchange_market_data_missing"));
    await loadMarketData({
      exchanges: [
        {
          id: "nodata",
          name: "No Data Exchange",
          spot: true,
          derivatives: false,
          marketData: true,
        },
      ],
    });
    expect(await item()).toMatchObject(missing("base_not_traded"));
    await loadMarketData({
      markets: [
        {
          exchangeId: "nodata",
          baseCoinId: "chainlink",
          quoteCoinId: "tether",
          quoteSymbol: "USDT",
          instrumentType: "spot",
          collectedSince: "2024-01-01",
        },
      ],
    });
    expect(await item()).toMatchObject(ELIGIBLE);
  });

  it("a load re-checks the reports of the markets and exchanges it changed, and no others", async () => {
    const uniswap = { baseCoinId: "uniswap" };
    const kraken = { exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "USD" };
    await submitOk(t, 2, [
      v2Record({ date: "2024-10-01" }),
      v2Record({ date: "2024-10-01", ...uniswap }),
      v2Record({ date: "2024-10-01", ...kraken }),
    ]);
    // A stale eligibility on every report: only those a load re-checks are set right again.
    await sql`update reports set eligibility_status = 'ineligible_market_data_missing',
      eligibility_reason = 'pair_not_found' where date = '2024-10-01'`.execute(t.database.db);
    const chainlinkSpot = {
      exchangeId: "binance",
      baseCoinId: "chainlink",
      quoteCoinId: "tether",
      quoteSymbol: "USDT",
      instrumentType: "spot",
    };
    await loadMarketData({ markets: [{ ...chainlinkSpot, collectedSince: "2024-01-02" }] });
    const item = (filter: Record<string, string>) => listedOn(t, "2024-10-01", filter);
    expect(await item({ baseCoinId: "chainlink", exchangeId: "binance" })).toMatchObject(ELIGIBLE);
    expect(await item({ baseCoinId: "uniswap" })).toMatchObject(missing("pair_not_found"));
    expect(await item({ exchangeId: "kraken" })).toMatchObject(missing("pair_not_found"));

    const krakenExchange = { id: "kraken", name: "Kraken", spot: true, derivatives: false };
    await loadMarketData({ exchanges: [{ ...krakenExchange, marketData: false }] });
    expect(await item({ exchangeId: "kraken" })).toMatchObject(
      missing("exchange_market_data_missing"),
    );
    expect(await item({ baseCoinId: "uniswap" })).toMatchObject(missing("pair_not_found"));
    await loadMarketData({ exchanges: [{ ...krakenExchange, marketData: true }] });
    expect(await item({ exchangeId: "kraken" })).toMatchObject(ELIGIBLE);

    // The operator's full recomputation still re-checks everything.
    const stores = t.database.stores;
    const ref = new ReferenceData((await stores.references.snapshot()).snapshot);
    await stores.transaction((tx) => recomputeEligibility(tx.eligibility, ref));
    expect(await item({ baseCoinId: "uniswap" })).toMatchObject(ELIGIBLE);
    await loadMarketData({ markets: [{ ...chainlinkSpot, collectedSince: "2024-01-01" }] });
  });
});
