import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import {
  compareListingKeys,
  dates,
  keyOf,
  listAll,
  listPage,
  submitAll,
} from "./helpers/reports.js";

let t: TestApp;

// 245 days x 5 reports a day = 1,225 reports, each tagged by its orderFillVolumeTaker.
const DAYS = dates("2023-01-01", 245);
const DAILY = [
  { exchangeId: "binance", quoteCoinId: "tether" },
  { exchangeId: "binance", quoteCoinId: "usd-coin" },
  { exchangeId: "binance", baseCoinId: "uniswap", quoteCoinId: "tether" },
  { exchangeId: "binance_futures", quoteCoinId: "tether", instrumentType: "perp" },
  { exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "USD" },
];
const records = DAYS.flatMap((date, d) =>
  DAILY.map((o, i) => v2Record({ date, ...o, orderFillVolumeTaker: d * DAILY.length + i + 1 })),
);
const TOTAL = records.length;
const ordered = [...records].sort((a, b) => compareListingKeys(keyOf(a), keyOf(b)));
const expectedTags = ordered.map((r) => r.orderFillVolumeTaker);
const tags = (items: { orderFillVolumeTaker: number }[]) =>
  items.map((i) => i.orderFillVolumeTaker);

beforeAll(async () => {
  t = await startTestApp();
  // Submitted interleaved (every third record first), so that storage order is not listing order.
  const interleaved = [0, 1, 2].flatMap((k) => records.filter((_, i) => i % 3 === k));
  expect(await submitAll(t, KEYS.acme, interleaved)).toEqual({
    createdCount: TOTAL,
    updatedCount: 0,
  });
  // In the same months: acme's reports of a project no longer engaged, and globex's own.
  const nearby = dates("2023-02-01", 40);
  await submitAll(
    t,
    KEYS.acme,
    nearby.map((date) => v2Record({ date, baseCoinId: "aave" })),
  );
  await submitAll(
    t,
    KEYS.globex,
    nearby.map((date) => v2Record({ date })),
  );
});
afterAll(async () => t?.close());

describe("paging through 1,225 reports", () => {
  it("counts every report and pages of 500 by default", async () => {
    expect(TOTAL).toBe(1225);
    const first = await listPage(t, KEYS.acme);
    expect(first.page).toBe(1);
    expect(first.totalCount).toBe(TOTAL);
    expect(first.totalPages).toBe(3);
    expect(first.items).toHaveLength(500);
  });

  it("returns each report exactly once, in order, walking pages of 500", async () => {
    const items = await listAll(t, KEYS.acme, { pageSize: 500 });
    expect(items).toHaveLength(TOTAL);
    expect(new Set(tags(items)).size).toBe(TOTAL);
    expect(tags(items)).toEqual(expectedTags);
  });

  it("returns each report exactly once, in order, walking pages of 7", async () => {
    const items = await listAll(t, KEYS.acme, { pageSize: 7 });
    expect(items).toHaveLength(TOTAL);
    expect(new Set(tags(items)).size).toBe(TOTAL);
    expect(tags(items)).toEqual(expectedTags);
  });

  it("states page, totalPages and totalCount exactly on every page", async () => {
    const sizes: [number, number, number][] = [
      // pageSize, totalPages, items on the last page
      [500, 3, 225],
      [7, 175, 7],
      [400, 4, 25],
      [1, 1225, 1],
      [245, 5, 245],
    ];
    for (const [pageSize, totalPages, onLast] of sizes) {
      const last = await listPage(t, KEYS.acme, { pageSize, page: totalPages });
      expect(last).toMatchObject({ page: totalPages, totalPages, totalCount: TOTAL });
      expect(last.items).toHaveLength(onLast);
      expect(tags(last.items)).toEqual(expectedTags.slice((totalPages - 1) * pageSize));
    }
  });

  it("returns the right slice for a page in the middle", async () => {
    const page = await listPage(t, KEYS.acme, { pageSize: 50, page: 13 });
    expect(page.page).toBe(13);
    expect(tags(page.items)).toEqual(expectedTags.slice(600, 650));
  });

  it("answers a page past the end with 200 and no items", async () => {
    for (const query of [
      { page: 4 },
      { page: 176, pageSize: 7 },
      { page: 999_999_999 },
      { page: 2, baseCoinId: "uniswap" },
    ]) {
      const page = await listPage(t, KEYS.acme, query);
      expect(page.page).toBe(query.page);
      expect(page.items).toEqual([]);
      expect(page.totalCount).toBe(query.baseCoinId ? 245 : TOTAL);
    }
  });

  it("pages a filtered listing over the filtered count", async () => {
    const [dateGte, dateLte] = [String(DAYS[100]), String(DAYS[199])];
    const query = { exchangeId: "binance", dateGte, dateLte, pageSize: 33 };
    const expected = ordered.filter(
      (r) => r.exchangeId === "binance" && String(r.date) >= dateGte && String(r.date) <= dateLte,
    );
    expect(expected).toHaveLength(300);
    const first = await listPage(t, KEYS.acme, query);
    expect(first).toMatchObject({ totalCount: 300, totalPages: 10 });
    const items = await listAll(t, KEYS.acme, query);
    expect(tags(items)).toEqual(tags(expected as { orderFillVolumeTaker: number }[]));
  });

  it("keeps the walk stable when a report is updated in between", async () => {
    const before = await listAll(t, KEYS.acme, { pageSize: 100 });
    await submitAll(t, KEYS.acme, [
      { ...(ordered[150] as Record<string, unknown>), bidDepth50: 1 },
    ]);
    const after = await listAll(t, KEYS.acme, { pageSize: 100 });
    expect(tags(after)).toEqual(tags(before));
    expect(after[150]?.bidDepth50).toBe(1);
  });

  it("shows another organization only its own reports, on any page", async () => {
    const items = await listAll(t, KEYS.globex, { pageSize: 15 });
    expect(items).toHaveLength(40);
    expect(items.every((item) => item.orderFillVolumeTaker === 20000)).toBe(true);
  });
});

describe("counting", () => {
  const RANGES: [string | undefined, string | undefined][] = [
    ["2023-01-15", undefined],
    [undefined, "2023-03-10"],
    ["2023-02-01", "2023-02-28"],
    ["2023-02-10", "2023-02-20"],
    ["2023-01-31", "2023-03-01"],
    ["2023-03-01", "2023-05-31"],
    ["2023-02-28", "2023-02-28"],
    ["2022-12-01", "2023-12-31"],
    [undefined, "2022-12-31"],
    ["2023-09-02", undefined],
  ];
  const FILTERS = [
    {},
    { baseCoinId: "uniswap" },
    { baseCoinId: "chainlink" },
    { exchangeId: "kraken" },
  ];

  async function expectExactCounts() {
    for (const [dateGte, dateLte] of RANGES) {
      for (const filter of FILTERS) {
        const query = { ...filter, dateGte, dateLte };
        const expected = records.filter(
          (r) =>
            Object.entries(filter).every(([field, value]) => r[field] === value) &&
            (dateGte === undefined || String(r.date) >= dateGte) &&
            (dateLte === undefined || String(r.date) <= dateLte),
        ).length;
        const page = await listPage(t, KEYS.acme, { ...query, pageSize: 10 });
        expect(page.totalCount, JSON.stringify(query)).toBe(expected);
        expect(page.totalPages).toBe(Math.ceil(expected / 10));
      }
    }
  }

  it("is exact for date ranges that start or end inside a month, with every filter", async () => {
    await expectExactCounts();
  });

  it("stays exact after updates, dry runs and refused batches", async () => {
    const existing = ordered.slice(0, 3).map((r) => ({ ...r, bidDepth50: 2 }));
    expect(await submitAll(t, KEYS.acme, existing)).toEqual({ createdCount: 0, updatedCount: 3 });
    const fresh = v2Record({ date: "2023-02-15", quoteCoinId: "bitcoin" });
    const dryRun = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      headers: { "x-dry-run": "true" },
      payload: { data: [fresh] },
    });
    expect(dryRun.json()).toEqual({ createdCount: 1, updatedCount: 0 });
    const refused = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [fresh, v2Record({ date: "2023-02-16", bidDepth50: -1 })] },
    });
    expect(refused.statusCode).toBe(400);
    const v1Update = { date: "2023-02-15", exchangeId: "kraken", baseCoinId: "chainlink" };
    const v1 = await t.request({
      method: "POST",
      url: "/api/v1/report",
      key: KEYS.acme,
      payload: { data: [{ ...v1Update, quoteCoinSymbol: "usd" }] },
    });
    expect(v1.json()).toEqual({ createdCount: 0, updatedCount: 1 });
    await expectExactCounts();
  });
});
