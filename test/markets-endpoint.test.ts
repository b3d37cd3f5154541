import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../src/services/fixtures.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const markets = async (query = "", key: string | null = KEYS.acme) =>
  t.request({ method: "GET", url: `/api/v1/markets${query}`, key });

/** The base fixture's markets, in the documented order (all of its exchanges have data). */
const BASE = [
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
];

describe("GET /api/v1/markets", () => {
  it("needs an API key", async () => {
    expect((await markets("", null)).statusCode).toBe(401);
  });

  it("lists every market with market data, ordered by its key, quoteCoinId only when set", async () => {
    const response = await markets();
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ page: 1, totalPages: 1, totalCount: 4, items: BASE });
  });

  it("filters by base coin and exchange", async () => {
    const chainlink = (await markets("?baseCoinId=chainlink")).json();
    expect(chainlink.items).toEqual(BASE.filter((m) => m.baseCoinId === "chainlink"));
    const both = (await markets("?baseCoinId=chainlink&exchangeId=kraken")).json();
    expect(both).toEqual({ page: 1, totalPages: 1, totalCount: 1, items: [BASE[3]] });
    const none = (await markets("?exchangeId=nowhere")).json();
    expect(none).toEqual({ page: 1, totalPages: 0, totalCount: 0, items: [] });
  });

  it("pages with page and pageSize", async () => {
    const second = (await markets("?page=2&pageSize=3")).json();
    expect(second).toEqual({ page: 2, totalPages: 2, totalCount: 4, items: [BASE[3]] });
    expect((await markets("?page=9&pageSize=3")).json().items).toEqual([]);
  });

  it("leaves out markets of exchanges without market data and shows new markets at once", async () => {
    await loadFixture(
      t.database.stores,
      {
        markets: [
          {
            exchangeId: "nodata",
            baseCoinId: "chainlink",
            quoteSymbol: "EUR",
            instrumentType: "spot",
            collectedSince: "2024-01-01",
          },
          {
            exchangeId: "kraken",
            baseCoinId: "aave",
            quoteSymbol: "eur",
            instrumentType: "spot",
            collectedSince: "2025-02-03",
          },
        ],
      },
      new Date(),
    );
    const items = (await markets()).json().items;
    expect(items.some((m: { exchangeId: string }) => m.exchangeId === "nodata")).toBe(false);
    expect((await markets("?exchangeId=kraken&baseCoinId=aave")).json().items).toEqual([
      {
        exchangeId: "kraken",
        baseCoinId: "aave",
        quoteSymbol: "EUR",
        instrumentType: "spot",
        collectedSince: "2025-02-03",
      },
    ]);
  });

  it.each([
    ["pageSize=0", "pageSize"],
    ["pageSize=1001", "pageSize"],
    ["page=abc", "page"],
    ["page=0", "page"],
    ["baseCoinId=a%00b", "baseCoinId"],
    ["exchangeId=", "exchangeId"],
    ["exchangeId=a&exchangeId=b", "exchangeId"],
  ])("answers %s with a 400 naming the parameter", async (query, path) => {
    const response = await markets(`?${query}`);
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body).toMatchObject({ statusCode: 400, error: "Bad Request" });
    expect(body.message.map((p: { path: string }) => p.path)).toEqual([path]);
  });

  it("is in the OpenAPI document with a description for every query parameter", async () => {
    const document = (await t.request({ method: "GET", url: "/openapi.json" })).json() as {
      paths: Record<string, { get: { parameters: { name: string; description?: string }[] } }>;
    };
    const operation = document.paths["/api/v1/markets"]?.get;
    expect(operation?.parameters.map((p) => p.name)).toEqual([
      "baseCoinId",
      "exchangeId",
      "page",
      "pageSize",
    ]);
    for (const parameter of operation?.parameters ?? []) {
      expect(parameter.description, parameter.name).toBeTruthy();
    }
  });
});
