import { parse } from "csv-parse/sync";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 150);
const STORED = ["2000-01-01", "2000-01-31", "2019-12-31", "2024-02-29", "2025-03-01"];

let t: TestApp;
beforeAll(async () => {
  // Lifted so that a long hunt (FUZZ_RUNS) is not cut short by the rate limits.
  t = await startTestApp({
    env: { RATE_LIMIT_PER_MINUTE: "1000000", RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000" },
  });
  const response = await t.request({
    method: "POST",
    url: "/api/v2/report",
    key: KEYS.acme,
    payload: { data: STORED.map((date) => v2Record({ date })) },
  });
  expect(response.statusCode, response.body).toBe(201);
});
afterAll(async () => t?.close());

const pad = (n: number, width: number) => String(n).padStart(width, "0");
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) =>
  m === 2 ? (leap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

/** Any real calendar date of the years 0000 to 9999, as the query parser accepts them. */
const calendarDate = fc
  .record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 1, max: 12 }),
    day: fc.integer({ min: 1, max: 31 }),
  })
  .map(
    ({ year, month, day }) =>
      `${pad(year, 4)}-${pad(month, 2)}-${pad(Math.min(day, daysIn(year, month)), 2)}`,
  );
/** The years where PostgreSQL and JavaScript date arithmetic break, weighted up. */
const edgeDate = fc.constantFrom(
  "0000-01-01",
  "0000-02-29",
  "0000-12-31",
  "0001-01-01",
  "1999-12-31",
  "9998-12-31",
  "9999-01-01",
  "9999-11-30",
  "9999-12-01",
  "9999-12-31",
);
const anyDate = fc.oneof(calendarDate, edgeDate);

async function list(query: { dateGte?: string; dateLte?: string }, csv: boolean) {
  const search = new URLSearchParams(query as Record<string, string>);
  return t.request({
    method: "GET",
    url: `/api/v1/reports?${search}`,
    key: KEYS.acme,
    headers: csv ? { accept: "text/csv" } : {},
  });
}

function expected(query: { dateGte?: string; dateLte?: string }): number {
  return STORED.filter(
    (d) =>
      (query.dateGte === undefined || d >= query.dateGte) &&
      (query.dateLte === undefined || d <= query.dateLte),
  ).length;
}

describe("listing date bounds over years 0000 to 9999", () => {
  it.each([
    { dateLte: "9999-12-31" },
    { dateGte: "0000-01-01" },
    { dateGte: "0000-01-01", dateLte: "9999-12-31" },
    { dateGte: "9999-12-31" },
    { dateLte: "0000-01-01" },
  ])("answers %o with the reports in range, as JSON and as CSV", async (query) => {
    const json = await list(query, false);
    expect(json.statusCode, json.body).toBe(200);
    expect(json.json().totalCount).toBe(expected(query));
    const csv = await list(query, true);
    expect(csv.statusCode, csv.body).toBe(200);
    expect(parse(csv.body, { columns: true })).toHaveLength(expected(query));
  });

  for (const csv of [false, true]) {
    it(`never answers 5xx for any accepted dateGte and dateLte (${csv ? "CSV" : "JSON"})`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.option(anyDate, { nil: undefined }),
          fc.option(anyDate, { nil: undefined }),
          async (dateGte, dateLte) => {
            const query = { ...(dateGte && { dateGte }), ...(dateLte && { dateLte }) };
            const response = await list(query, csv);
            expect([200, 400], response.body).toContain(response.statusCode);
            const count = csv
              ? parse(response.body, { columns: true }).length
              : response.json().totalCount;
            expect(count).toBe(expected(query));
          },
        ),
        { numRuns: RUNS },
      );
    }, 60_000);
  }
});
