import type { Fixture } from "../../src/schemas/fixture.js";

export const KEYS = {
  acme: "acme-key-0123456789abcdef0123456789",
  acmeRevoked: "acme-revoked-key-0123456789abcdef0123",
  globex: "globex-key-0123456789abcdef0123456789",
};

/** A small world: two venue families, a spot-only exchange, one without market data. */
export function baseFixture(): Fixture {
  return {
    coins: [
      { id: "bitcoin", symbol: "BTC", name: "Bitcoin" },
      { id: "tether", symbol: "USDT", name: "Tether" },
      { id: "usd-coin", symbol: "USDC", name: "USDC" },
      { id: "chainlink", symbol: "LINK", name: "Chainlink" },
      { id: "uniswap", symbol: "UNI", name: "Uniswap" },
      { id: "aave", symbol: "AAVE", name: "Aave" },
    ],
    exchanges: [
      {
        id: "binance",
        name: "Binance",
        spot: true,
        derivatives: false,
        marketData: true,
        group: "binance",
      },
      {
        id: "binance_futures",
        name: "Binance (Futures)",
        spot: false,
        derivatives: true,
        marketData: true,
        group: "binance",
      },
      { id: "kraken", name: "Kraken", spot: true, derivatives: false, marketData: true },
      { id: "deribit", name: "Deribit", spot: false, derivatives: true, marketData: true },
      { id: "nodata", name: "No Data Exchange", spot: true, derivatives: false, marketData: false },
    ],
    markets: [
      {
        exchangeId: "binance",
        baseCoinId: "chainlink",
        quoteCoinId: "tether",
        quoteSymbol: "USDT",
        instrumentType: "spot",
        collectedSince: "2024-01-01",
      },
      {
        exchangeId: "binance",
        baseCoinId: "uniswap",
        quoteCoinId: "tether",
        quoteSymbol: "USDT",
        instrumentType: "spot",
        collectedSince: "2024-01-01",
      },
      {
        exchangeId: "binance_futures",
        baseCoinId: "chainlink",
        quoteCoinId: "tether",
        quoteSymbol: "USDT",
        instrumentType: "perp",
        collectedSince: "2024-06-01",
      },
      {
        exchangeId: "kraken",
        baseCoinId: "chainlink",
        quoteSymbol: "USD",
        instrumentType: "spot",
        collectedSince: "2024-01-01",
      },
    ],
    organizations: [
      {
        id: "acme",
        name: "Acme Market Making",
        apiKeys: [KEYS.acme, { key: KEYS.acmeRevoked, revoked: true }],
        engagements: [
          { baseCoinId: "chainlink", type: "project", since: "2024-01-01", until: null },
          { baseCoinId: "uniswap", type: "exchange", since: "2024-01-01", until: null },
          { baseCoinId: "aave", type: "prop", since: "2024-01-01", until: "2024-12-31" },
        ],
      },
      {
        id: "globex",
        name: "Globex Liquidity",
        apiKeys: [KEYS.globex],
        engagements: [
          { baseCoinId: "chainlink", type: "project", since: "2024-01-01", until: null },
        ],
      },
    ],
  };
}

/** A complete, valid v2 record; override what a test is about. */
export function v2Record(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    date: "2025-03-01",
    exchangeId: "binance",
    baseCoinId: "chainlink",
    quoteCoinId: "tether",
    bidDepthTob: 1000,
    bidDepth10: 2000,
    bidDepth25: 3000,
    bidDepth50: 4000,
    bidDepth100: 5000,
    bidDepth200: 6000,
    askDepthTob: 1100,
    askDepth10: 2100,
    askDepth25: 3100,
    askDepth50: 4100,
    askDepth100: 5100,
    askDepth200: 6100,
    bidAskDepth50: 8100,
    bidAskDepth100: 10100,
    bidAskDepth200: 12100,
    bidAskSpread: 0.25,
    topOfBookPercentage: 42.5,
    orderFillVolumeMaker: 50000,
    orderFillVolumeTaker: 20000,
    orderFillVolumeMakerTob: 10000,
    instrumentType: "spot",
    type: "project",
    ...overrides,
  };
}

export function v1Record(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    date: "2025-03-01",
    exchangeId: "binance",
    baseCoinId: "chainlink",
    quoteCoinId: "tether",
    bidDepth50: 4000,
    askDepth50: 4100,
    ...overrides,
  };
}

/** `count` distinct valid v2 records (distinct dates), for batch tests. */
export function v2Records(
  count: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown>[] {
  const start = Date.UTC(2023, 0, 1);
  return Array.from({ length: count }, (_, i) =>
    v2Record({ date: new Date(start + i * 86_400_000).toISOString().slice(0, 10), ...overrides }),
  );
}
