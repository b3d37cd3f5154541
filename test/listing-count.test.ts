import fc from "fast-check";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDays, wholeMonthsWithin } from "../src/domain/dates.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
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
      { numRuns: 80 },
    );
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
});
