import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays, wholeMonthsWithin } from "../src/domain/dates.js";
import { openDatabase } from "../src/store/database.js";
import { createStores } from "../src/store/stores.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { onPostgres } from "./helpers/database.js";
import { KEYS, v2Record } from "./helpers/fixture.js";

let t: TestApp;
const FIRST = "2024-01-25";
const DAYS = 130;

beforeAll(async () => {
  t = await startTestApp();
  // Reports on every day of a range crossing several month boundaries, on two coins and two
  // venues, so that whole and partial months both occur.
  const records = [];
  for (let d = 0; d < DAYS; d++) {
    const date = addDays(FIRST, d);
    records.push(v2Record({ date }));
    if (d % 2 === 0) records.push(v2Record({ date, baseCoinId: "uniswap" }));
    if (d % 3 === 0)
      records.push(
        v2Record({ date, exchangeId: "kraken", quoteCoinId: undefined, quoteCoinSymbol: "usd" }),
      );
  }
  for (let i = 0; i < records.length; i += 300) {
    const r = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: records.slice(i, i + 300) },
    });
    expect(r.statusCode).toBe(201);
  }
});
afterAll(async () => t?.close());

describe("whole months within a date range", () => {
  it.each([
    ["2024-01-01", "2024-01-31", { first: "2024-01-01", last: "2024-01-01" }],
    ["2024-01-02", "2024-01-31", undefined],
    ["2024-01-02", "2024-03-30", { first: "2024-02-01", last: "2024-02-01" }],
    ["2024-02-01", "2024-02-29", { first: "2024-02-01", last: "2024-02-01" }],
    [undefined, "2024-02-28", { first: undefined, last: "2024-01-01" }],
    ["2024-12-15", undefined, { first: "2025-01-01", last: undefined }],
  ])("from %s to %s", (from, to, expected) => {
    expect(wholeMonthsWithin(from, to)).toEqual(expected);
  });
});

describe("totalCount", () => {
  it("equals the number of matching reports for any date range and filter", async () => {
    expect(await pendingDeltas()).toBeGreaterThan(0); // none folded in yet
    await expectExactCounts(80);
  });

  it("stays exact when reports are updated rather than created", async () => {
    const before = (
      await t.request({ method: "GET", url: "/api/v1/reports?pageSize=1", key: KEYS.acme })
    ).json().totalCount;
    const again = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: [v2Record({ date: FIRST })] },
    });
    expect(again.json()).toEqual({ createdCount: 0, updatedCount: 1 });
    const after = (
      await t.request({ method: "GET", url: "/api/v1/reports?pageSize=1", key: KEYS.acme })
    ).json().totalCount;
    expect(after).toBe(before);
  });

  it("stays exact when batches of one organization are stored at once", async () => {
    const batch = (offset: number) =>
      Array.from({ length: 40 }, (_, d) => v2Record({ date: addDays("2023-03-01", offset + d) }));
    const answers = await Promise.all(
      [0, 40, 80, 120].map((offset) =>
        t.request({
          method: "POST",
          url: "/api/v2/report",
          key: KEYS.acme,
          payload: { data: batch(offset) },
        }),
      ),
    );
    for (const a of answers) expect(a.json()).toEqual({ createdCount: 40, updatedCount: 0 });
    expect(await countsByMonth()).toEqual(await reportsByMonth());
  });

  it("writes one delta row per batch that creates reports, whatever coins and months it covers", async () => {
    const before = await pendingDeltas();
    const records = [
      v2Record({ date: "2021-01-31" }),
      v2Record({ date: "2021-02-01" }),
      v2Record({ date: "2021-02-01", baseCoinId: "uniswap" }),
    ];
    const post = () =>
      t.request({
        method: "POST",
        url: "/api/v2/report",
        key: KEYS.acme,
        payload: { data: records },
      });
    expect((await post()).json()).toEqual({ createdCount: 3, updatedCount: 0 });
    expect(await pendingDeltas()).toBe(before + 1);
    expect((await post()).json()).toEqual({ createdCount: 0, updatedCount: 3 });
    expect(await pendingDeltas()).toBe(before + 1);
    expect(await countsByMonth()).toEqual(await reportsByMonth());
  });

  it("stays exact once the deltas are folded in, and with some folded and some pending", async () => {
    const pending = await pendingDeltas();
    expect(await t.database.stores.monthCounts.compact()).toBe(pending);
    expect(await pendingDeltas()).toBe(0);
    expect(await t.database.stores.monthCounts.compact()).toBe(0);
    expect(await countsByMonth({ foldedOnly: true })).toEqual(await reportsByMonth());
    await expectExactCounts(30);
    const more = Array.from({ length: 50 }, (_, d) => v2Record({ date: addDays("2020-03-01", d) }));
    const r = await t.request({
      method: "POST",
      url: "/api/v2/report",
      key: KEYS.acme,
      payload: { data: more },
    });
    expect(r.json()).toEqual({ createdCount: 50, updatedCount: 0 });
    expect(await pendingDeltas()).toBe(1);
    await expectExactCounts(30);
  });

  it("counts no other organization's deltas, however many tiny batches it stores", async () => {
    const total = async (key: string) =>
      (await t.request({ method: "GET", url: "/api/v1/reports?pageSize=1", key })).json()
        .totalCount as number;
    const acmeBefore = await total(KEYS.acme);
    // Another tenant floods acme's coin and months with one-record batches.
    for (let d = 0; d < 40; d++) {
      const r = await t.request({
        method: "POST",
        url: "/api/v2/report",
        key: KEYS.globex,
        payload: { data: [v2Record({ date: addDays(FIRST, d) })] },
      });
      expect(r.json()).toEqual({ createdCount: 1, updatedCount: 0 });
    }
    expect(await total(KEYS.acme)).toBe(acmeBefore);
    expect(await total(KEYS.globex)).toBe(40);
    await t.database.stores.monthCounts.compact();
    expect(await total(KEYS.acme)).toBe(acmeBefore);
    expect(await total(KEYS.globex)).toBe(40);
    await expectExactCounts(20);
  });

  it("folds each delta once when compactions run together while batches are stored", async () => {
    // PGlite has one connection: there the compactions interleave on it.
    const others = onPostgres
      ? await Promise.all([1, 2, 3].map(() => openDatabase(t.database.config)))
      : [];
    try {
      const batch = (offset: number) =>
        Array.from({ length: 25 }, (_, d) =>
          v2Record({
            date: addDays("2019-01-01", offset + d),
            baseCoinId: d % 2 ? "uniswap" : "chainlink",
          }),
        );
      const submissions = Array.from({ length: 12 }, (_, i) =>
        t.request({
          method: "POST",
          url: "/api/v2/report",
          key: KEYS.acme,
          payload: { data: batch(i * 25) },
        }),
      );
      const stores = onPostgres ? others.map((o) => createStores(o.db)) : [t.database.stores];
      const compactions = stores.flatMap((s) => [0, 1, 2].map(() => s.monthCounts.compact()));
      const answers = await Promise.all(submissions);
      for (const a of answers) expect(a.json()).toEqual({ createdCount: 25, updatedCount: 0 });
      const folded = (await Promise.all(compactions)).reduce((sum, n) => sum + n, 0);
      const rest = await t.database.stores.monthCounts.compact();
      expect(folded + rest).toBeGreaterThanOrEqual(12);
      expect(await pendingDeltas()).toBe(0);
      expect(await countsByMonth({ foldedOnly: true })).toEqual(await reportsByMonth());
    } finally {
      await Promise.all(others.map((o) => o.close()));
    }
  });
});

async function expectExactCounts(numRuns: number) {
  const day = fc.integer({ min: -10, max: DAYS + 10 }).map((d) => addDays(FIRST, d));
  await fc.assert(
    fc.asyncProperty(
      fc.option(day, { nil: undefined }),
      fc.option(day, { nil: undefined }),
      fc.option(fc.constantFrom("chainlink", "uniswap"), { nil: undefined }),
      fc.option(fc.constantFrom("binance", "kraken"), { nil: undefined }),
      async (dateGte, dateLte, baseCoinId, exchangeId) => {
        const params = new URLSearchParams(
          Object.entries({ dateGte, dateLte, baseCoinId, exchangeId, pageSize: "1" }).filter(
            (e): e is [string, string] => e[1] !== undefined,
          ),
        );
        const response = await t.request({
          method: "GET",
          url: `/api/v1/reports?${params}`,
          key: KEYS.acme,
        });
        expect(response.statusCode).toBe(200);
        const exact = await sql<{ n: number }>`
            select count(*)::int as n from reports
            where organization_id = 'acme' and base_coin_id in ('chainlink', 'uniswap')
              and (${baseCoinId ?? null}::text is null or base_coin_id = ${baseCoinId ?? null})
              and (${exchangeId ?? null}::text is null or exchange_id = ${exchangeId ?? null})
              and (${dateGte ?? null}::date is null or date >= ${dateGte ?? null}::date)
              and (${dateLte ?? null}::date is null or date <= ${dateLte ?? null}::date)`.execute(
          t.database.db,
        );
        expect(response.json().totalCount).toBe(exact.rows[0]?.n);
      },
    ),
    { numRuns },
  );
}

async function pendingDeltas(): Promise<number> {
  return t.database.stores.monthCounts.pending();
}

/**
 * The month counts summed over their shards, with the batches' deltas not yet folded in
 * unless `foldedOnly`, and the same counted from the reports.
 */
async function countsByMonth({ foldedOnly = false } = {}) {
  const r = await sql<{ coin: string; month: string; n: number }>`
    select coin, month::text as month, sum(n)::int as n from (
      select base_coin_id as coin, month, n from report_month_counts where organization_id = 'acme'
      union all
      select d.coin, d.month, d.n from report_month_count_deltas x
        cross join lateral unnest(x.base_coin_ids, x.months, x.ns) as d(coin, month, n)
      where x.organization_id = 'acme' and not ${foldedOnly}
    ) counts group by 1, 2 order by 1, 2`.execute(t.database.db);
  return r.rows;
}
async function reportsByMonth() {
  const r = await sql<{ coin: string; month: string; n: number }>`
    select base_coin_id as coin, date_trunc('month', date)::date::text as month, count(*)::int as n
    from reports where organization_id = 'acme' group by 1, 2 order by 1, 2`.execute(t.database.db);
  return r.rows;
}
