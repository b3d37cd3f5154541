import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marketMakerCaller } from "../src/domain/caller.js";
import { reportItemSchema } from "../src/schemas/report.js";
import { loadFixture } from "../src/services/fixtures.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import { compareListingKeys, keyOf, listPage, submitAll } from "./helpers/reports.js";

let t: TestApp;

// Seven reports a day, tied on date and, in groups, on exchange, base coin and quote key. Each
// carries its own orderFillVolumeTaker, so a listed item tells which record it is.
const DATES = ["2024-12-31", "2025-01-01", "2025-01-15", "2025-01-31", "2025-02-01"];
const DAILY = [
  { exchangeId: "bybit", quoteCoinId: "tether", instrumentType: "spot" },
  { exchangeId: "binance", baseCoinId: "uniswap", quoteCoinId: "tether" },
  { exchangeId: "binance", quoteCoinId: "usd-coin" },
  { exchangeId: "binance_futures", quoteCoinId: "tether", instrumentType: "perp" },
  { exchangeId: "bybit", quoteCoinId: "tether", instrumentType: "perp" },
  { exchangeId: "binance", quoteCoinId: "tether" },
];
const v2 = DATES.flatMap((date, d) =>
  DAILY.map((o, i) => v2Record({ date, ...o, orderFillVolumeTaker: d * 10 + i + 1 })),
);
const v1 = DATES.map((date, d) =>
  v1Record({
    date,
    exchangeId: "kraken",
    quoteCoinId: undefined,
    quoteCoinSymbol: "usd",
    orderFillVolumeTaker: d * 10 + 9,
  }),
);
const all = [...v2, ...v1].sort((a, b) => compareListingKeys(keyOf(a), keyOf(b)));
const tagsOf = (records: Record<string, unknown>[]) => records.map((r) => r.orderFillVolumeTaker);

beforeAll(async () => {
  t = await startTestApp();
  await loadFixture(
    t.database.stores,
    {
      exchanges: [{ id: "bybit", name: "Bybit", spot: true, derivatives: true, marketData: true }],
      markets: (["spot", "perp"] as const).map((instrumentType) => ({
        exchangeId: "bybit",
        baseCoinId: "chainlink",
        quoteCoinId: "tether",
        quoteSymbol: "USDT",
        instrumentType,
        collectedSince: "2024-01-01",
      })),
    },
    new Date(),
  );
  t.services.referenceData.invalidate();
  await submitAll(t, KEYS.acme, v2);
  await submitAll(t, KEYS.acme, v1, 1);
});
afterAll(async () => t?.close());

describe("listed items", () => {
  it("show a v2 report with names, symbols, every metric and its eligibility", async () => {
    const page = await listPage(t, KEYS.acme, {
      dateGte: "2025-02-01",
      exchangeId: "binance",
      pageSize: 1,
    });
    expect(page.items[0]).toEqual({
      date: "2025-02-01",
      exchangeId: "binance",
      exchangeName: "Binance",
      baseCoinId: "chainlink",
      baseCoinSymbol: "LINK",
      quoteCoinId: "tether",
      bidDepth50: 4000,
      askDepth50: 4100,
      bidAskDepth50: 8100,
      bidDepth100: 5000,
      askDepth100: 5100,
      bidAskDepth100: 10100,
      bidDepth200: 6000,
      askDepth200: 6100,
      bidAskDepth200: 12100,
      bidAskSpread: 0.25,
      orderFillVolumeMaker: 50000,
      orderFillVolumeTaker: 46,
      type: "project",
      topOfBookPercentage: 42.5,
      bidDepthTob: 1000,
      bidDepth10: 2000,
      bidDepth25: 3000,
      askDepthTob: 1100,
      askDepth10: 2100,
      askDepth25: 3100,
      orderFillVolumeMakerTob: 10000,
      eligibilityStatus: "eligible",
      eligibilityReason: null,
    });
  });

  it("show a v1 report with its defaults and null for every v2-only field", async () => {
    const page = await listPage(t, KEYS.acme, { dateLte: "2024-12-31", exchangeId: "kraken" });
    expect(page.items).toEqual([
      {
        date: "2024-12-31",
        exchangeId: "kraken",
        exchangeName: "Kraken",
        baseCoinId: "chainlink",
        baseCoinSymbol: "LINK",
        quoteCoinSymbol: "USD",
        bidDepth50: 4000,
        askDepth50: 4100,
        bidAskDepth50: 0,
        bidDepth100: 0,
        askDepth100: 0,
        bidAskDepth100: 0,
        bidDepth200: 0,
        askDepth200: 0,
        bidAskDepth200: 0,
        bidAskSpread: 100,
        orderFillVolumeMaker: 0,
        orderFillVolumeTaker: 9,
        type: null,
        topOfBookPercentage: null,
        bidDepthTob: null,
        bidDepth10: null,
        bidDepth25: null,
        askDepthTob: null,
        askDepth10: null,
        askDepth25: null,
        orderFillVolumeMakerTob: null,
        eligibilityStatus: "eligible",
        eligibilityReason: null,
      },
    ]);
  });

  it("never carry an instrument type, and always carry the required fields", async () => {
    const page = await listPage(t, KEYS.acme);
    expect(page.items).toHaveLength(all.length);
    for (const item of page.items) {
      expect(item).not.toHaveProperty("instrumentType");
      for (const field of ["date", "exchangeId", "exchangeName", "baseCoinId", "baseCoinSymbol"])
        expect(typeof (item as Record<string, unknown>)[field]).toBe("string");
      expect(item).toHaveProperty("eligibilityReason");
    }
  });

  it("show the latest submission of a key: v1 over v2 nulls the v2-only fields", async () => {
    const date = "2024-07-04";
    await submitAll(t, KEYS.acme, [v2Record({ date, orderFillVolumeTaker: 7 })]);
    await submitAll(t, KEYS.acme, [v1Record({ date, orderFillVolumeTaker: 8 })], 1);
    const page = await listPage(t, KEYS.acme, { dateGte: date, dateLte: date });
    expect(page.totalCount).toBe(1);
    expect(page.items[0]).toMatchObject({ orderFillVolumeTaker: 8, type: null, bidDepthTob: null });
  });
});

describe("the JSON page, written by the database", () => {
  it("has the same items, keys in the same order, as the export path builds them", async () => {
    const response = await t.request({ method: "GET", url: "/api/v1/reports", key: KEYS.acme });
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
    const items = response.json().items as Record<string, unknown>[];
    const caller = marketMakerCaller("acme");
    const exported: Record<string, unknown>[] = [];
    // The export's items are the listing's plus instrumentType (a CSV column only).
    for await (const chunk of t.services.exportReports(caller, { page: 1 }))
      for (const { instrumentType, ...item } of chunk) {
        expect(["spot", "perp"]).toContain(instrumentType);
        exported.push(item);
      }
    expect(items.length).toBeGreaterThanOrEqual(all.length);
    expect(items).toEqual(exported);
    items.forEach((item, i) => {
      expect(Object.keys(item)).toEqual(Object.keys(exported[i] ?? {}));
      expect(reportItemSchema.strict().parse(item)).toEqual(item);
    });
  });
});

describe("ordering", () => {
  it("is date descending, then exchange, base coin, quote key and instrument type", async () => {
    const page = await listPage(t, KEYS.acme, { dateGte: DATES[0] });
    expect(tagsOf(page.items)).toEqual(tagsOf(all));
    // Spelled out for one day, ties included:
    expect(tagsOf(page.items.slice(0, 7))).toEqual([46, 43, 42, 44, 45, 41, 49]);
  });

  it("does not depend on the order of submission", async () => {
    const page = await listPage(t, KEYS.acme, { dateGte: DATES[0], pageSize: 500 });
    const reversed = [...all].reverse().sort((a, b) => compareListingKeys(keyOf(a), keyOf(b)));
    expect(tagsOf(page.items)).toEqual(tagsOf(reversed));
  });
});

describe("filters", () => {
  const cases: {
    name: string;
    query: Record<string, string>;
    keep: (r: Record<string, unknown>) => boolean;
  }[] = [
    {
      name: "baseCoinId",
      query: { baseCoinId: "uniswap" },
      keep: (r) => r.baseCoinId === "uniswap",
    },
    { name: "exchangeId", query: { exchangeId: "bybit" }, keep: (r) => r.exchangeId === "bybit" },
    {
      name: "dateGte, inclusive",
      query: { dateGte: "2025-01-15" },
      keep: (r) => String(r.date) >= "2025-01-15",
    },
    {
      name: "dateLte, inclusive",
      query: { dateLte: "2025-01-01" },
      keep: (r) => String(r.date) <= "2025-01-01",
    },
    {
      name: "dateGte and dateLte on one day",
      query: { dateGte: "2025-01-15", dateLte: "2025-01-15" },
      keep: (r) => r.date === "2025-01-15",
    },
    {
      name: "all four together",
      query: {
        baseCoinId: "chainlink",
        exchangeId: "binance",
        dateGte: "2025-01-01",
        dateLte: "2025-01-31",
      },
      keep: (r) =>
        r.baseCoinId === "chainlink" &&
        r.exchangeId === "binance" &&
        String(r.date) >= "2025-01-01" &&
        String(r.date) <= "2025-01-31",
    },
    {
      name: "exchangeId with baseCoinId",
      query: { exchangeId: "kraken", baseCoinId: "uniswap" },
      keep: () => false,
    },
  ];
  for (const c of cases) {
    it(`keep exactly the matching reports for ${c.name}`, async () => {
      const page = await listPage(t, KEYS.acme, {
        ...c.query,
        dateGte: c.query.dateGte ?? DATES[0],
      });
      const expected = all.filter(c.keep);
      expect(page.totalCount).toBe(expected.length);
      expect(tagsOf(page.items)).toEqual(tagsOf(expected));
    });
  }

  it("give an empty page for an unknown coin or exchange, or a reversed date range", async () => {
    for (const query of [
      { baseCoinId: "dogecoin" },
      { exchangeId: "nowhere" },
      { dateGte: "2025-02-01", dateLte: "2025-01-01" },
    ]) {
      expect(await listPage(t, KEYS.acme, query)).toEqual({
        page: 1,
        totalPages: 0,
        totalCount: 0,
        items: [],
      });
    }
  });

  it("ignore unknown query parameters", async () => {
    const plain = await listPage(t, KEYS.acme, { exchangeId: "bybit" });
    const noisy = await listPage(t, KEYS.acme, { exchangeId: "bybit", sort: "asc", limit: 1 });
    expect(noisy).toEqual(plain);
  });
});

describe("query errors", () => {
  const bad: [string, string][] = [
    ["dateGte=2025-13-01", "dateGte"],
    ["dateLte=2025-02-30", "dateLte"],
    ["dateGte=20250101", "dateGte"],
    ["dateLte=", "dateLte"],
    ["page=0", "page"],
    ["page=abc", "page"],
    ["page=-1", "page"],
    ["page=1.5", "page"],
    ["page=1&page=2", "page"],
    ["pageSize=501", "pageSize"],
    ["pageSize=0", "pageSize"],
    ["baseCoinId=a%00b", "baseCoinId"],
  ];
  for (const [query, path] of bad) {
    it(`answer ${query} with 400 naming ${path}`, async () => {
      const response = await t.request({
        method: "GET",
        url: `/api/v1/reports?${query}`,
        key: KEYS.acme,
      });
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body).toMatchObject({ statusCode: 400, error: "Bad Request" });
      expect(body.message).toHaveLength(1);
      expect(body.message[0]).toEqual({ path, message: expect.any(String) });
    });
  }

  it("list every bad parameter at once", async () => {
    const response = await t.request({
      method: "GET",
      url: "/api/v1/reports?dateGte=2025-13-01&page=0&pageSize=501",
      key: KEYS.acme,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().message.map((p: { path: string }) => p.path)).toEqual([
      "dateGte",
      "page",
      "pageSize",
    ]);
  });
});
