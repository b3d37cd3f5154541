import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCoinGeckoClient } from "../src/adapters/coingecko-client.js";
import { createAdminServices } from "../src/services/admin.js";
import { loadFixture } from "../src/services/fixtures.js";
import { ok, type Route, sequence, startCoinGecko, stopCoinGecko } from "./helpers/coingecko.js";
import { freshDatabase, type TestDatabase } from "./helpers/database.js";
import { baseFixture } from "./helpers/fixture.js";

// A sync fitted to what is stored: read under the load's turn, a stored exchange's group and a
// stored market's collectedSince kept, CoinGecko's odd entries skipped with a warning.

let d: TestDatabase;
beforeEach(async () => {
  d = await freshDatabase();
  await loadFixture(d.stores, baseFixture(), new Date());
});
afterEach(async () => {
  await stopCoinGecko();
  await d.close();
});

const coins = [
  { id: "chainlink", symbol: "link", name: "Chainlink" },
  { id: "tether", symbol: "usdt", name: "Tether" },
];
const ticker = (target: string, extra: Record<string, unknown> = {}) => ({
  base: "LINK",
  target,
  coin_id: "chainlink",
  ...(target === "USDT" ? { target_coin_id: "tether" } : {}),
  ...extra,
});

/** CoinGecko's lists and `routes`; the admin services of this file's database on it. */
async function coinGecko(
  lists: { spot?: unknown[]; derivatives?: unknown[]; coins?: unknown[] },
  routes: Record<string, Route> = {},
  sleep: (ms: number) => Promise<void> = async () => {},
) {
  const { baseUrl } = await startCoinGecko({
    "/coins/list": ok(lists.coins ?? coins),
    "/exchanges/list": ok(lists.spot ?? []),
    "/derivatives/exchanges/list": ok(lists.derivatives ?? []),
    ...routes,
  });
  return createAdminServices(d.stores, {
    now: () => new Date("2026-11-21T10:00:00Z"),
    coinGecko: () => createCoinGeckoClient({ baseUrl, sleep }),
  });
}

const stored = async () => (await d.stores.references.snapshot()).snapshot;
const exchangeOf = async (id: string) => (await stored()).exchanges.find((e) => e.id === id);

describe("market-data sync and what is stored", () => {
  it("keeps the collectedSince an import committed while the sync waited", async () => {
    const admin = await coinGecko(
      { spot: [{ id: "kraken", name: "Kraken" }] },
      {
        "/exchanges/kraken/tickers": sequence(
          { status: 429, headers: { "retry-after": "4" }, body: {} },
          { body: { name: "Kraken", tickers: [ticker("EUR")] } },
        ),
      },
      // During the Retry-After wait, an operator imports the market with an earlier date.
      async () => {
        await admin.importMarketData({
          markets: [
            {
              exchangeId: "kraken",
              baseCoinId: "chainlink",
              quoteSymbol: "EUR",
              instrumentType: "spot",
              collectedSince: "2025-06-01",
            },
          ],
        });
      },
    );
    const summary = await admin.syncMarketData({ coinIds: ["chainlink"], exchangeIds: ["kraken"] });
    const eur = (await stored()).markets.find((m) => m.quoteSymbol === "EUR");
    expect(eur?.collectedSince).toBe("2025-06-01");
    expect(summary).toMatchObject({ newMarkets: 0, warnings: [] });
  });

  it("keeps the stored group of an exchange, and gives a new one its family's stored group", async () => {
    const okx = (id: string, name: string, spot: boolean) => ({
      id,
      name,
      spot,
      derivatives: !spot,
      marketData: true,
      group: "okx",
    });
    await loadFixture(
      d.stores,
      { exchanges: [okx("okex", "OKX", true), okx("okex_swap", "OKX (Swap)", false)] },
      new Date(),
    );
    const none = ok({ name: "x", tickers: [] });
    const admin = await coinGecko(
      {
        spot: [{ id: "okex", name: "OKX" }],
        derivatives: [
          { id: "okex_swap", name: "OKX (Swap)" },
          { id: "okex_options", name: "OKX (Options)" },
        ],
      },
      { "/derivatives/exchanges/okex_swap": none, "/derivatives/exchanges/okex_options": none },
    );
    await admin.syncMarketData({ coinIds: ["chainlink"], exchangeIds: ["okex_swap"] });
    expect((await exchangeOf("okex_swap"))?.group).toBe("okx");
    await admin.syncMarketData({ coinIds: ["chainlink"], exchangeIds: ["okex_options"] });
    expect((await exchangeOf("okex_options"))?.group).toBe("okx");
    expect((await exchangeOf("okex"))?.group).toBe("okx");
  });

  it("keeps a flag the stored markets need when CoinGecko moved the exchange, with a warning", async () => {
    // binance_futures has a stored perp market; CoinGecko now lists it among spot exchanges.
    const admin = await coinGecko(
      { spot: [{ id: "binance_futures", name: "Binance (Futures)" }] },
      { "/exchanges/binance_futures/tickers": ok({ name: "x", tickers: [ticker("USDT")] }) },
    );
    const summary = await admin.syncMarketData({
      coinIds: ["chainlink"],
      exchangeIds: ["binance_futures"],
    });
    expect(await exchangeOf("binance_futures")).toMatchObject({ spot: true, derivatives: true });
    expect(summary.warnings).toEqual([
      "exchange 'binance_futures' is no longer in CoinGecko's derivatives list but has stored perp markets: derivatives kept true",
    ]);
  });

  it("keeps an operator's marketData false: the sync stores the markets, reports there stay ineligible", async () => {
    const admin = await coinGecko(
      { spot: [{ id: "nodata", name: "No Data Exchange" }] },
      { "/exchanges/nodata/tickers": ok({ name: "x", tickers: [ticker("USDT")] }) },
    );
    const summary = await admin.syncMarketData({ coinIds: ["chainlink"], exchangeIds: ["nodata"] });
    expect((await exchangeOf("nodata"))?.marketData).toBe(false);
    expect((await stored()).markets.some((m) => m.exchangeId === "nodata")).toBe(true);
    expect(summary.warnings).toEqual([
      "exchange 'nodata' has marketData false in the stored reference data: kept false (an import changes it)",
    ]);
  });

  it("skips a coin or ticker with an unexpected value, naming it, and loads the rest", async () => {
    const admin = await coinGecko(
      {
        spot: [{ id: "kraken", name: "Kraken" }],
        coins: [
          { id: "chainlink", symbol: "link", name: "x".repeat(201) },
          { id: "tether", symbol: "usdt", name: "Tether" },
          { id: "longcoin", symbol: "lng", name: "y".repeat(201) },
        ],
      },
      {
        "/exchanges/kraken/tickers": ok({
          name: "Kraken",
          tickers: [
            ticker("EUR"),
            ticker("GBP", { cost_to_move_up_usd: "500" }),
            ticker("LNG", { target_coin_id: "longcoin" }),
          ],
        }),
      },
    );
    const summary = await admin.syncMarketData({ coinIds: ["chainlink"], exchangeIds: ["kraken"] });
    expect(summary.warnings).toEqual([
      expect.stringMatching(
        /^ticker LINK\/GBP \(chainlink\) on kraken skipped: cost_to_move_up_usd: /,
      ),
      expect.stringMatching(/^coin 'chainlink' skipped: name: /),
      expect.stringMatching(/^coin 'longcoin' skipped: name: /),
      "market kraken chainlink/LNG (spot) skipped: coin 'longcoin' was left out",
    ]);
    const { coins: storedCoins, markets } = await stored();
    expect(storedCoins.find((c) => c.id === "chainlink")?.name).toBe("Chainlink");
    expect(
      markets
        .filter((m) => m.exchangeId === "kraken")
        .map((m) => m.quoteSymbol)
        .sort(),
    ).toEqual(["EUR", "USD"]);
  });
});

describe("market-data sync --depth-only", () => {
  it("skips an exchange CoinGecko no longer knows, with a warning, and records the others", async () => {
    const depth = { cost_to_move_up_usd: 100, cost_to_move_down_usd: 100 };
    const admin = await coinGecko(
      {},
      { "/exchanges/binance/tickers": ok({ name: "Binance", tickers: [ticker("USDT", depth)] }) },
    );
    const summary = await admin.quality.syncDepthSnapshots({});
    expect(summary).toMatchObject({ exchanges: 2, snapshots: 1 });
    expect(summary.warnings).toEqual([
      expect.stringMatching(
        /^exchange 'kraken' skipped: CoinGecko request to .*\/exchanges\/kraken\/tickers\?.* failed with status 404/,
      ),
    ]);
  });
});
