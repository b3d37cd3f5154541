import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import {
  COINGECKO_PRO_BASE_URL,
  COINGECKO_PUBLIC_BASE_URL,
  type CoinGeckoClientOptions,
  createCoinGeckoClient,
  type RetryInfo,
} from "../src/adapters/coingecko-client.js";
import { exchangeBrand, groupExchanges } from "../src/services/exchange-groups.js";
import {
  type ReferenceDataSet,
  type ReferenceMarket,
  syncMarketData,
} from "../src/services/market-data-sync.js";
import { depthSnapshotsOf } from "../src/services/quality-snapshots.js";
import { ok, type Route, sequence, startCoinGecko, stopCoinGecko } from "./helpers/coingecko.js";

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`./fixtures/coingecko/${name}`, import.meta.url), "utf8"));

afterEach(stopCoinGecko);

function recordingSleep() {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms: number) => {
      delays.push(ms);
    },
  };
}

function testClient(baseUrl: string, options: Partial<CoinGeckoClientOptions> = {}) {
  return createCoinGeckoClient({ baseUrl, sleep: recordingSleep().sleep, ...options });
}

/**
 * With depth=true, CoinGecko adds to each ticker the USD it costs to move the price 2 % up and
 * down (numbers; null where it has no order book). Without it, the fields are absent.
 */
const withDepth =
  (route: Route): Route =>
  (query) => {
    const reply = route(query);
    if (query.get("depth") !== "true" || typeof reply !== "object" || !("body" in reply))
      return reply;
    const body = reply.body as { tickers: Record<string, unknown>[] };
    const tickers = body.tickers.map((ticker, i) => ({
      ...ticker,
      cost_to_move_up_usd: i === 1 ? null : 250_000.5 + i,
      cost_to_move_down_usd: i === 1 ? null : 240_000.25 + i,
    }));
    return { ...reply, body: { ...body, tickers } };
  };

function coinGeckoRoutes(): Record<string, Route> {
  const btcUsdt = fixture("binance-tickers-page-1-ticker.json");
  return {
    "/coins/list": ok(fixture("coins-list.json")),
    "/exchanges/list": ok(fixture("exchanges-list.json")),
    "/derivatives/exchanges/list": ok(fixture("derivatives-exchanges-list.json")),
    // A full first page, then a short one. CoinGecko lists each pair once; repeating one ticker
    // keeps the page short to write and shows that the sync deduplicates markets.
    "/exchanges/binance/tickers": withDepth((query) =>
      query.get("page") === "1"
        ? { body: { name: "Binance", tickers: Array.from({ length: 100 }, () => btcUsdt) } }
        : { body: fixture("binance-tickers-page-2.json") },
    ),
    "/exchanges/kraken/tickers": withDepth(ok(fixture("kraken-tickers.json"))),
    "/exchanges/bybit_spot/tickers": withDepth(ok(fixture("bybit-spot-tickers.json"))),
    "/derivatives/exchanges/binance_futures": ok(fixture("binance-futures.json")),
    "/derivatives/exchanges/bybit": ok(fixture("bybit-futures.json")),
    "/derivatives/exchanges/deribit": ok(fixture("deribit.json")),
  };
}

const byKey = (a: ReferenceMarket, b: ReferenceMarket) =>
  JSON.stringify([a.exchangeId, a.instrumentType, a.baseCoinId, a.quoteSymbol]).localeCompare(
    JSON.stringify([b.exchangeId, b.instrumentType, b.baseCoinId, b.quoteSymbol]),
  );

describe("syncMarketData", () => {
  const today = "2025-03-10";
  const existingMarkets = [
    {
      exchangeId: "binance",
      baseCoinId: "bitcoin",
      quoteSymbol: "USDT",
      instrumentType: "spot" as const,
      collectedSince: "2024-01-01",
      quoteCoinId: "tether",
    },
    {
      exchangeId: "binance_futures",
      baseCoinId: "bitcoin",
      quoteSymbol: "USDT",
      instrumentType: "perp" as const,
      collectedSince: "2024-03-01",
      quoteCoinId: "tether",
    },
    {
      exchangeId: "kraken",
      baseCoinId: "bitcoin",
      quoteSymbol: "usd",
      instrumentType: "spot" as const,
      collectedSince: "2023-06-01",
      quoteCoinId: null,
    },
  ];
  const exchangeIds = [
    "binance",
    "binance_futures",
    "kraken",
    "bybit_spot",
    "bybit",
    "deribit",
    "no_such_exchange",
  ];

  async function runSync() {
    const { baseUrl, requests } = await startCoinGecko(coinGeckoRoutes());
    const applied: ReferenceDataSet[] = [];
    const progress: Array<[number, number, string]> = [];
    const result = await syncMarketData({
      client: testClient(baseUrl),
      coinIds: ["bitcoin", "ethereum", "not-a-coin"],
      exchangeIds,
      today,
      onProgress: (done, total, label) => progress.push([done, total, label]),
      applyReferenceData: async (dataOf) => {
        applied.push(dataOf({ coins: [], exchanges: [], markets: existingMarkets }));
      },
    });
    return { result, applied, progress, requests };
  }

  it("collects the requested coins and the quote coins their markets reference", async () => {
    const { result } = await runSync();
    expect([...result.coins].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      { id: "bitcoin", symbol: "BTC", name: "Bitcoin" },
      { id: "ethereum", symbol: "ETH", name: "Ethereum" },
      { id: "tether", symbol: "USDT", name: "Tether" },
      { id: "usd-coin", symbol: "USDC", name: "USDC" },
    ]);
    expect(result.unknownCoinIds).toEqual(["not-a-coin"]);
  });

  it("returns the requested exchanges with their venue family as group", async () => {
    const { result } = await runSync();
    const exchange = (id: string, name: string, kind: "spot" | "derivatives", group: string) => ({
      id,
      name,
      spot: kind === "spot",
      derivatives: kind === "derivatives",
      marketData: true,
      group,
    });
    expect([...result.exchanges].sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      exchange("binance", "Binance", "spot", "binance"),
      exchange("binance_futures", "Binance (Futures)", "derivatives", "binance"),
      exchange("bybit", "Bybit (Futures)", "derivatives", "bybit_spot"),
      exchange("bybit_spot", "Bybit", "spot", "bybit_spot"),
      exchange("deribit", "Deribit", "derivatives", "deribit"),
      exchange("kraken", "Kraken", "spot", "kraken"),
    ]);
    expect(result.unknownExchangeIds).toEqual(["no_such_exchange"]);
  });

  it("builds deduplicated spot and perp markets, keeping collectedSince of known pairs", async () => {
    const { result } = await runSync();
    const market = (
      exchangeId: string,
      instrumentType: "spot" | "perp",
      baseCoinId: string,
      quoteSymbol: string,
      quoteCoinId: string | undefined,
      collectedSince = today,
    ): ReferenceMarket => ({
      exchangeId,
      baseCoinId,
      ...(quoteCoinId ? { quoteCoinId } : {}),
      quoteSymbol,
      instrumentType,
      collectedSince,
    });
    const expected = [
      market("binance", "spot", "bitcoin", "USDT", "tether", "2024-01-01"),
      market("binance", "spot", "ethereum", "BTC", "bitcoin"),
      market("binance", "spot", "ethereum", "USDT", "tether"),
      market("binance", "spot", "bitcoin", "USDC", "usd-coin"),
      // Fiat quotes carry no quoteCoinId; a stale pair (BTC/GBP) and a coin nobody asked for
      // (SOL) are left out.
      market("kraken", "spot", "bitcoin", "USD", undefined, "2023-06-01"),
      market("kraken", "spot", "bitcoin", "EUR", undefined),
      market("kraken", "spot", "ethereum", "USD", undefined),
      market("bybit_spot", "spot", "bitcoin", "USDT", "tether"),
      market("bybit_spot", "spot", "ethereum", "USDT", "tether"),
      // Perpetuals only (dated futures are left out), matched by base symbol.
      market("binance_futures", "perp", "bitcoin", "USDT", "tether", "2024-03-01"),
      market("binance_futures", "perp", "ethereum", "USDT", "tether"),
      market("binance_futures", "perp", "bitcoin", "USD", undefined),
      market("bybit", "perp", "bitcoin", "USDT", "tether"),
      market("bybit", "perp", "ethereum", "USDC", "usd-coin"),
      market("deribit", "perp", "bitcoin", "USD", undefined),
    ];
    expect([...result.markets].sort(byKey)).toEqual(expected.sort(byKey));
    expect([...result.newMarkets].sort(byKey)).toEqual(
      expected.filter((m) => m.collectedSince === today).sort(byKey),
    );
  });

  it("hands the data set to applyReferenceData once", async () => {
    const { result, applied } = await runSync();
    expect(applied).toEqual([
      { coins: result.coins, exchanges: result.exchanges, markets: result.markets },
    ]);
  });

  it("pages through tickers of the requested coins, only for the requested exchanges", async () => {
    const { requests } = await runSync();
    const tickerRequests = requests.filter((r) => r.path.endsWith("/tickers"));
    expect(tickerRequests.map((r) => [r.path, r.query.get("page")])).toEqual([
      ["/exchanges/binance/tickers", "1"],
      ["/exchanges/binance/tickers", "2"],
      ["/exchanges/bybit_spot/tickers", "1"],
      ["/exchanges/kraken/tickers", "1"],
    ]);
    for (const request of tickerRequests) {
      expect(request.query.get("coin_ids")).toBe("bitcoin,ethereum");
      expect(request.query.get("depth")).toBe("true");
    }
    const derivativeRequests = requests.filter((r) => r.path.startsWith("/derivatives/exchanges/"));
    expect(derivativeRequests.map((r) => [r.path, r.query.get("include_tickers")])).toEqual([
      ["/derivatives/exchanges/list", null],
      ["/derivatives/exchanges/binance_futures", "unexpired"],
      ["/derivatives/exchanges/bybit", "unexpired"],
      ["/derivatives/exchanges/deribit", "unexpired"],
    ]);
  });

  it("reads the public 2 % depth of the spot markets, and tolerates its absence", async () => {
    const { result } = await runSync();
    const now = new Date("2025-03-10T09:00:00Z");
    const snapshots = depthSnapshotsOf(result.spotTickers, result.markets, now);
    const krakenUsd = snapshots.find((s) => s.exchangeId === "kraken" && s.quoteSymbol === "USD");
    expect(krakenUsd).toEqual({
      exchangeId: "kraken",
      baseCoinId: "bitcoin",
      instrumentType: "spot",
      quoteSymbol: "USD",
      quoteCoinId: null,
      date: "2025-03-10",
      takenAt: new Date("2025-03-10T08:02:00+00:00"),
      costToMoveUpUsd: 250_000.5,
      costToMoveDownUsd: 240_000.25,
      bidAskSpreadPercentage: 0.010014,
      volumeUsd: 119746500,
      source: "coingecko",
    });
    // CoinGecko's null (no order book) is kept as absent; the other figures stay.
    const krakenEur = snapshots.find((s) => s.exchangeId === "kraken" && s.quoteSymbol === "EUR");
    expect(krakenEur).toMatchObject({ costToMoveUpUsd: null, volumeUsd: 119746500 });
    // A client without depth=true (or an older plan) gets no cost fields: nothing fails.
    const { baseUrl } = await startCoinGecko(coinGeckoRoutes());
    const { tickers: plain } = await testClient(baseUrl).allExchangeTickers("kraken", {
      coinIds: ["bitcoin"],
    });
    expect(plain[0]?.cost_to_move_up_usd).toBeUndefined();
    expect(
      depthSnapshotsOf(
        plain.slice(0, 1).map((ticker) => ({ exchangeId: "kraken", ticker })),
        result.markets,
        now,
      ),
    ).toMatchObject([{ costToMoveUpUsd: null, costToMoveDownUsd: null }]);
    // A fetch time after now (a wrong clock, a year PostgreSQL cannot hold) is not believed.
    for (const last_fetch_at of ["2099-01-01T00:00:00Z", "+275760-09-13T00:00:00Z"]) {
      const ticker = { ...(plain[0] as (typeof plain)[0]), last_fetch_at };
      expect(
        depthSnapshotsOf([{ exchangeId: "kraken", ticker }], result.markets, now),
      ).toMatchObject([{ takenAt: now, date: now.toISOString().slice(0, 10) }]);
    }
  });

  it("reports progress up to the last step", async () => {
    const { progress } = await runSync();
    expect(progress.map(([done]) => done)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(progress.at(-1)).toEqual([10, 10, "apply reference data"]);
    expect(progress.map(([, , label]) => label)).toContain("tickers binance");
  });
});

describe("groupExchanges", () => {
  const spot = fixture("exchanges-list.json") as Array<{ id: string; name: string }>;
  const derivatives = fixture("derivatives-exchanges-list.json") as Array<{
    id: string;
    name: string;
  }>;

  it("puts a derivatives exchange in the group of the spot exchange of the same brand", () => {
    const groups = groupExchanges(spot, derivatives);
    expect(groups.get("binance_futures")).toBe("binance");
    expect(groups.get("okex_swap")).toBe("okex");
    expect(groups.get("gate_futures")).toBe("gate");
    expect(groups.get("kraken_futures")).toBe("kraken");
    expect(groups.get("bybit")).toBe("bybit_spot");
  });

  it("matches a spot exchange whose name carries the qualifier", () => {
    const groups = groupExchanges(
      [{ id: "bybit_spot", name: "Bybit (Spot)" }],
      [{ id: "bybit", name: "Bybit" }],
    );
    expect(groups.get("bybit")).toBe("bybit_spot");
  });

  it("prefers the spot exchange named just the brand over its regional offshoots", () => {
    const groups = groupExchanges(
      [
        { id: "binance_us", name: "Binance US" },
        { id: "binance", name: "Binance" },
      ],
      [{ id: "binance_futures", name: "Binance (Futures)" }],
    );
    expect(groups.get("binance_futures")).toBe("binance");
  });

  it("keeps spot exchanges and derivatives exchanges without a family in their own group", () => {
    const groups = groupExchanges(spot, derivatives);
    expect(groups.get("binance_us")).toBe("binance_us");
    expect(groups.get("binance")).toBe("binance");
    expect(groups.get("deribit")).toBe("deribit");
    expect(groups.get("uniswap_v3")).toBe("uniswap_v3");
  });

  it("normalises names to their brand", () => {
    expect(exchangeBrand("Gate.io (Futures)")).toBe("gate.io");
    expect(exchangeBrand("  OKX ")).toBe("okx");
    expect(exchangeBrand("AscendEX (BitMax) (Futures)")).toBe("ascendex");
  });
});

describe("createCoinGeckoClient", () => {
  const coinsList = [{ id: "bitcoin", symbol: "btc", name: "Bitcoin" }];

  it("sends a demo API key in x-cg-demo-api-key", async () => {
    const { baseUrl, requests } = await startCoinGecko({ "/coins/list": ok(coinsList) });
    await testClient(baseUrl, { apiKey: "CG-demo", keyType: "demo" }).coinsList();
    expect(requests[0]?.headers["x-cg-demo-api-key"]).toBe("CG-demo");
    expect(requests[0]?.headers["x-cg-pro-api-key"]).toBeUndefined();
  });

  it("sends a pro API key in x-cg-pro-api-key", async () => {
    const { baseUrl, requests } = await startCoinGecko({ "/coins/list": ok(coinsList) });
    await testClient(baseUrl, { apiKey: "CG-pro", keyType: "pro" }).coinsList();
    expect(requests[0]?.headers["x-cg-pro-api-key"]).toBe("CG-pro");
    expect(requests[0]?.headers["x-cg-demo-api-key"]).toBeUndefined();
  });

  it("sends no key header without a key", async () => {
    const { baseUrl, requests } = await startCoinGecko({ "/coins/list": ok(coinsList) });
    await testClient(baseUrl).coinsList();
    expect(Object.keys(requests[0]?.headers ?? {})).not.toContain("x-cg-demo-api-key");
  });

  it("defaults to the public API, or the pro API for a pro key", async () => {
    const urls: string[] = [];
    const fetch: typeof globalThis.fetch = async (input) => {
      urls.push(String(input));
      return Response.json([]);
    };
    await createCoinGeckoClient({ fetch }).exchangesList();
    await createCoinGeckoClient({ fetch, apiKey: "k", keyType: "pro" }).exchangesList();
    expect(urls).toEqual([
      `${COINGECKO_PUBLIC_BASE_URL}/exchanges/list`,
      `${COINGECKO_PRO_BASE_URL}/exchanges/list`,
    ]);
  });

  it("follows ticker pages until a page has fewer than 100 tickers", async () => {
    const ticker = { base: "BTC", target: "USDT", coin_id: "bitcoin", target_coin_id: "tether" };
    const { baseUrl, requests } = await startCoinGecko({
      "/exchanges/binance/tickers": (query) => ({
        body: { name: "Binance", tickers: Array(query.get("page") === "1" ? 100 : 3).fill(ticker) },
      }),
    });
    const { tickers } = await testClient(baseUrl).allExchangeTickers("binance", {
      coinIds: ["bitcoin", "ethereum"],
    });
    expect(tickers).toHaveLength(103);
    expect(requests.map((r) => r.query.toString())).toEqual([
      "page=1&coin_ids=bitcoin%2Cethereum",
      "page=2&coin_ids=bitcoin%2Cethereum",
    ]);
  });

  it("retries a 503 with exponential backoff and a 429 after its Retry-After", async () => {
    const { baseUrl, requests } = await startCoinGecko({
      "/coins/list": sequence(
        { status: 503, body: { error: "Service Unavailable" } },
        { status: 429, headers: { "retry-after": "0" }, body: { error: "Throttled" } },
        { body: coinsList },
      ),
    });
    const { delays, sleep } = recordingSleep();
    const retries: RetryInfo[] = [];
    const coins = await testClient(baseUrl, { sleep, onRetry: (info) => retries.push(info) })
      .coinsList()
      .then((list) => list.map((coin) => coin.id));
    expect(coins).toEqual(["bitcoin"]);
    expect(requests).toHaveLength(3);
    expect(delays).toEqual([1000, 0]);
    expect(retries.map((r) => [r.attempt, r.status])).toEqual([
      [1, 503],
      [2, 429],
    ]);
  });

  it("gives up after maxRetries, naming the URL and the status", async () => {
    const { baseUrl, requests } = await startCoinGecko({
      "/coins/list": () => ({ status: 503, body: { error: "Service Unavailable" } }),
    });
    const { delays, sleep } = recordingSleep();
    await expect(testClient(baseUrl, { sleep, maxRetries: 2 }).coinsList()).rejects.toThrow(
      `${baseUrl}/coins/list failed with status 503`,
    );
    expect(requests).toHaveLength(3);
    expect(delays).toEqual([1000, 2000]);
  });

  it("retries a dropped connection", async () => {
    const { baseUrl, requests } = await startCoinGecko({
      "/coins/list": sequence("drop", { body: coinsList }),
    });
    const { delays, sleep } = recordingSleep();
    await expect(testClient(baseUrl, { sleep }).coinsList()).resolves.toHaveLength(1);
    expect(requests).toHaveLength(2);
    expect(delays).toEqual([1000]);
  });

  it("fails at once on a 404, naming the URL and the status", async () => {
    const { baseUrl, requests } = await startCoinGecko({});
    const { delays, sleep } = recordingSleep();
    const client = testClient(baseUrl, { sleep });
    await expect(client.exchangeTickers("nope", { coinIds: [], page: 1 })).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/exchanges/nope/tickers?page=1 failed with status 404`,
    );
    expect(requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("names a refused connection and the URL", async () => {
    const { baseUrl, stop } = await startCoinGecko({});
    await stop(); // nothing listens there now
    const client = testClient(baseUrl, { maxRetries: 1 });
    await expect(client.coinsList()).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/coins/list failed: connection refused by ${new URL(baseUrl).host} (ECONNREFUSED) after 2 attempts`,
    );
  });

  it("names a timeout and the URL", async () => {
    const { baseUrl } = await startCoinGecko({ "/coins/list": () => "hang" });
    const client = testClient(baseUrl, { maxRetries: 0, timeoutMs: 200 });
    await expect(client.coinsList()).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/coins/list failed: no answer within 200 ms (timeout)`,
    );
  });

  it("names a failed DNS lookup and the host", async () => {
    // No name is resolved for real (tests stay on loopback): fetch's own error shape, as
    // undici throws it for an unknown host.
    const lookup = Object.assign(new Error("getaddrinfo ENOTFOUND api.coingecko.invalid"), {
      code: "ENOTFOUND",
    });
    const client = createCoinGeckoClient({
      baseUrl: "https://api.coingecko.invalid/api/v3",
      maxRetries: 0,
      fetch: async () => {
        throw new TypeError("fetch failed", { cause: lookup });
      },
    });
    await expect(client.coinsList()).rejects.toThrow(
      "CoinGecko request to https://api.coingecko.invalid/api/v3/coins/list failed: DNS lookup of api.coingecko.invalid failed (ENOTFOUND)",
    );
  });

  it("retries a body cut short, and names the URL and the cause when it stays so", async () => {
    const cut = { body: '{"name":"Binance","tickers":[{"base":"LINK","tar' };
    const { baseUrl, requests } = await startCoinGecko({
      "/exchanges/binance/tickers": sequence(cut, { body: { name: "Binance", tickers: [] } }),
      "/exchanges/kraken/tickers": ok(cut.body),
    });
    const { delays, sleep } = recordingSleep();
    const client = testClient(baseUrl, { sleep, maxRetries: 1 });
    expect(await client.allExchangeTickers("binance", { coinIds: [] })).toEqual({
      tickers: [],
      skipped: [],
    });
    expect(delays).toHaveLength(1);
    await expect(client.allExchangeTickers("kraken", { coinIds: [] })).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/exchanges/kraken/tickers?page=1 failed: returned a body that is not JSON (truncated?)`,
    );
    expect(requests.filter((r) => r.path === "/exchanges/kraken/tickers")).toHaveLength(2);
  });

  it("names the URL and a timeout when the body stops arriving, after retrying", async () => {
    const { baseUrl } = await startCoinGecko({ "/coins/list": () => ({ partial: '[{"id":' }) });
    const client = testClient(baseUrl, { timeoutMs: 200, maxRetries: 1 });
    await expect(client.coinsList()).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/coins/list failed: reading the body: no answer within 200 ms (timeout) after 2 attempts`,
    );
  });

  it("fails at once on a Retry-After longer than it waits, naming it", async () => {
    const { baseUrl, requests } = await startCoinGecko({
      "/coins/list": () => ({ status: 429, headers: { "retry-after": "86400" }, body: {} }),
    });
    const { delays, sleep } = recordingSleep();
    await expect(testClient(baseUrl, { sleep }).coinsList()).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/coins/list failed with status 429 and Retry-After 86400 (longer than the 120 s a sync waits): try again later`,
    );
    expect(requests).toHaveLength(1);
    expect(delays).toEqual([]);
  });

  it("refuses a body larger than its cap, by Content-Length or as it arrives", async () => {
    const { baseUrl, requests } = await startCoinGecko({
      "/coins/list": ok("x".repeat(2000)),
      "/exchanges/list": () => ({ partial: `[${" ".repeat(2000)}` }),
    });
    const client = testClient(baseUrl, { maxBodyBytes: 1000 });
    await expect(client.coinsList()).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/coins/list failed: returned a body larger than 1000 bytes`,
    );
    await expect(client.exchangesList()).rejects.toThrow(
      `CoinGecko request to ${baseUrl}/exchanges/list failed: returned a body larger than 1000 bytes`,
    );
    expect(requests).toHaveLength(2);
  });

  it("rejects a response of the wrong shape, naming the endpoint and the first issue", async () => {
    const { baseUrl } = await startCoinGecko({
      "/coins/list": ok([{ id: "bitcoin", symbol: "btc" }]),
      "/derivatives/exchanges/okex": ok({ tickers: [] }),
    });
    const client = testClient(baseUrl);
    await expect(client.coinsList()).rejects.toThrow(
      /CoinGecko \/coins\/list returned an unexpected response at 0\.name/,
    );
    await expect(client.derivativesExchange("okex")).rejects.toThrow(
      /CoinGecko \/derivatives\/exchanges\/okex returned an unexpected response at name: /,
    );
  });

  it("skips a ticker of the wrong shape with a line naming it, and keeps the others", async () => {
    const good = { base: "LINK", target: "USDT", coin_id: "chainlink", target_coin_id: "tether" };
    const { baseUrl } = await startCoinGecko({
      "/derivatives/exchanges/deribit": ok({ name: "Deribit", tickers: [{ base: "BTC" }] }),
      "/exchanges/binance/tickers": ok({
        name: "Binance",
        tickers: [
          { ...good, cost_to_move_up_usd: "500" },
          { ...good, target: "USDC", cost_to_move_down_usd: -1 },
          { ...good, target: "EUR", cost_to_move_down_usd: "1e400" },
          good,
        ],
      }),
    });
    const client = testClient(baseUrl);
    expect(await client.derivativesExchange("deribit")).toEqual({
      name: "Deribit",
      tickers: [],
      skipped: [
        "ticker BTC/? (?) on deribit skipped: symbol: Invalid input: expected string, received undefined",
      ],
    });
    const { tickers, skipped } = await client.allExchangeTickers("binance", { coinIds: [] });
    expect(tickers).toEqual([good]);
    expect(skipped).toEqual([
      expect.stringMatching(
        /^ticker LINK\/USDT \(chainlink\) on binance skipped: cost_to_move_up_usd: /,
      ),
      expect.stringMatching(
        /^ticker LINK\/USDC \(chainlink\) on binance skipped: cost_to_move_down_usd: /,
      ),
      expect.stringMatching(
        /^ticker LINK\/EUR \(chainlink\) on binance skipped: cost_to_move_down_usd: /,
      ),
    ]);
  });
});
