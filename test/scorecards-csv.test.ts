import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SCORECARD_KEYS as KEYS, scorecardWorld, type World } from "./helpers/scorecard-world.js";

/** The scorecards as CSV (`Accept: text/csv`): the same items as the JSON answer, row for row. */
let w: World;
beforeAll(async () => {
  w = await scorecardWorld();
  w.setClock(new Date("2025-03-10T00:00:00Z"));
});
afterAll(async () => w?.t.close());

const RANGE = "dateGte=2025-03-01&dateLte=2025-03-05";
const SUMMARY = `/api/v1/scorecards?${RANGE}`;
const DAILY = `/api/v1/scorecards/daily?${RANGE}`;

const get = (url: string, key: string, accept?: string) =>
  w.t.request({ method: "GET", url, key, headers: accept ? { accept } : {} });

/** The CSV's rows as objects keyed by the header row (every cell a string). */
function rowsOf(body: string): Record<string, string>[] {
  return parse(body, { columns: true });
}

/** A JSON value as its CSV cell: null an empty cell, numbers and booleans as written. */
const cell = (value: unknown) => (value === null || value === undefined ? "" : String(value));

describe("GET /api/v1/scorecards as CSV", () => {
  it("answers text/csv, one row per JSON item, with the range and every figure", async () => {
    const json = (await get(SUMMARY, KEYS.operator)).json();
    const response = await get(SUMMARY, KEYS.operator, "text/csv");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-type"]).toBe("text/csv; charset=utf-8");
    expect(response.headers["content-disposition"]).toBe(
      'attachment; filename="scorecards-2025-03-01-2025-03-05.csv"',
    );
    expect(response.body.endsWith("\r\n")).toBe(true);
    expect(response.body.split("\r\n")[0]).toBe(
      "dateGte,dateLte,organizationId,organizationName,baseCoinId,exchangeId,quote,instrumentType,daysDue,daysReported,daysMissing,daysLate,daysEligible,daysMet,compliance,daysFlagged,medianDepthShare200.bid,medianDepthShare200.ask,minBidDepth200.daysMet,minBidDepth200.daysMissed,minAskDepth200.daysMet,minAskDepth200.daysMissed,maxBidAskSpread.daysMet,maxBidAskSpread.daysMissed,minTopOfBookPercentage.daysMet,minTopOfBookPercentage.daysMissed",
    );
    const rows = rowsOf(response.body);
    expect(json.items.length).toBeGreaterThan(5);
    expect(rows).toHaveLength(json.items.length);
    for (const [i, item] of json.items.entries()) {
      const row = rows[i] as Record<string, string>;
      expect(row.dateGte).toBe("2025-03-01");
      expect(row.dateLte).toBe("2025-03-05");
      for (const field of ["organizationId", "organizationName", "baseCoinId", "exchangeId"]) {
        expect(row[field]).toBe(item[field]);
      }
      for (const field of ["quote", "instrumentType", "daysDue", "daysMet", "compliance"]) {
        expect(row[field]).toBe(cell(item[field]));
      }
      expect(row.daysFlagged).toBe(cell(item.daysFlagged));
      expect(row["medianDepthShare200.bid"]).toBe(cell(item.medianDepthShare200.bid));
      expect(row["minBidDepth200.daysMet"]).toBe(cell(item.kpis.minBidDepth200?.daysMet));
      // A market whose periods never set a KPI has its columns empty, not 0.
      expect(row["minAskDepth200.daysMissed"]).toBe(cell(item.kpis.minAskDepth200?.daysMissed));
    }
    const uniswap = rows.find((r) => r.baseCoinId === "uniswap");
    expect(uniswap?.["maxBidAskSpread.daysMet"]).toBe("");
    expect(uniswap?.["minAskDepth200.daysMet"]).not.toBe("");
  });

  it("keeps the caller's scope: a project's rows are its JSON items", async () => {
    const json = (await get(SUMMARY, KEYS.project)).json();
    const rows = rowsOf((await get(SUMMARY, KEYS.project, "text/csv")).body);
    expect(
      rows.map((r) => `${r.organizationId}/${r.baseCoinId}/${r.exchangeId}/${r.quote}`),
    ).toEqual(
      json.items.map(
        (i: Record<string, string>) =>
          `${i.organizationId}/${i.baseCoinId}/${i.exchangeId}/${i.quote}`,
      ),
    );
    expect(new Set(rows.map((r) => r.baseCoinId))).toEqual(new Set(["chainlink"]));
  });

  it("nothing in scope is a header row alone, with no KPI columns", async () => {
    const response = await get(`${SUMMARY}&organizationId=nobody`, KEYS.operator, "text/csv");
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(
      "dateGte,dateLte,organizationId,organizationName,baseCoinId,exchangeId,quote,instrumentType,daysDue,daysReported,daysMissing,daysLate,daysEligible,daysMet,compliance,daysFlagged,medianDepthShare200.bid,medianDepthShare200.ask\r\n",
    );
  });
});

describe("GET /api/v1/scorecards/daily as CSV", () => {
  it("one row per market and day, as in JSON", async () => {
    const json = (await get(DAILY, KEYS.acme)).json();
    const response = await get(DAILY, KEYS.acme, "text/csv");
    expect(response.statusCode).toBe(200);
    expect(response.headers["content-disposition"]).toBe(
      'attachment; filename="scorecards-daily-2025-03-01-2025-03-05.csv"',
    );
    const rows = rowsOf(response.body);
    expect(rows).toHaveLength(json.items.length);
    expect(rows.map((r) => Object.values(r))).toEqual(
      json.items.map((i: Record<string, unknown>) => [
        i.date,
        i.organizationId,
        i.organizationName,
        i.baseCoinId,
        i.exchangeId,
        i.quote,
        i.instrumentType,
        i.status,
        String(i.late),
        (i.failedKpis as string[]).join(" "),
        cell(i.eligibilityStatus),
      ]),
    );
    expect(rows.some((r) => r.failedKpis === "minBidDepth200")).toBe(true);
    expect(rows.some((r) => r.status === "missing" && r.eligibilityStatus === "")).toBe(true);
    expect(rows.some((r) => r.late === "true")).toBe(true);
  });
});

describe("negotiation and errors", () => {
  for (const url of [SUMMARY, DAILY]) {
    it(`${url.split("?")[0]}: JSON unless CSV is preferred`, async () => {
      for (const accept of [
        undefined,
        "*/*",
        "application/json",
        "text/csv;q=0.1, application/json",
      ]) {
        const response = await get(url, KEYS.acme, accept);
        expect(response.headers["content-type"], String(accept)).toMatch(/^application\/json/);
      }
      for (const accept of [
        "text/csv; header=present",
        "text/*",
        "application/json;q=0.5, text/csv",
      ]) {
        const response = await get(url, KEYS.acme, accept);
        expect(response.headers["content-type"], accept).toBe("text/csv; charset=utf-8");
      }
    });

    it(`${url.split("?")[0]}: a bad query is still a JSON 400 in the problem shape`, async () => {
      const path = url.split("?")[0];
      const response = await get(`${path}?dateGte=2025-02-30`, KEYS.acme, "text/csv");
      expect(response.statusCode).toBe(400);
      expect(response.headers["content-type"]).toMatch(/^application\/json/);
      expect(response.json()).toEqual({
        statusCode: 400,
        error: "Bad Request",
        message: [{ path: "dateGte", message: "Invalid date, expected YYYY-MM-DD" }],
      });
    });
  }

  it("without a key, a CSV request is a 401 like any other", async () => {
    const response = await w.t.request({
      method: "GET",
      url: SUMMARY,
      headers: { accept: "text/csv" },
    });
    expect(response.statusCode).toBe(401);
  });
});

describe("the OpenAPI document's CSV downloads", () => {
  it("keeps the export's one file name and gives the scorecards theirs", async () => {
    const document = (await w.t.app.inject({ url: "/openapi.json" })).json();
    const headerOf = (path: string) => {
      const ref = document.paths[path].get.responses["200"].headers["Content-Disposition"].$ref;
      return document.components.headers[String(ref).split("/").at(-1) ?? ""].schema;
    };
    expect(headerOf("/api/v1/reports")).toEqual({
      type: "string",
      const: 'attachment; filename="reports.csv"',
    });
    for (const path of ["/api/v1/scorecards", "/api/v1/scorecards/daily"]) {
      expect(headerOf(path).pattern).toMatch(/^\^attachment; filename="scorecards/);
    }
  });
});
