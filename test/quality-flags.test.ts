import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plausibilityMask, qualityFlagsOf } from "../src/domain/quality.js";
import type { Report } from "../src/domain/report.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { submitAll } from "./helpers/reports.js";

/** A v2 record whose numbers raise no flag (the fixture's v2Record), with `overrides`. */
const metricsOf = (overrides: Record<string, number | null> = {}) => {
  const { date, exchangeId, baseCoinId, quoteCoinId, instrumentType, type, ...metrics } =
    v2Record(overrides);
  return metrics as unknown as Report["metrics"];
};
const flagsOf = (overrides: Record<string, number | null>) =>
  qualityFlagsOf(plausibilityMask(metricsOf(overrides)));

describe("plausibility flags of hand-built records", () => {
  it("raises nothing on a plausible record", () => {
    expect(flagsOf({})).toEqual([]);
  });

  it("flags a wider band holding less than a narrower one, on either side", () => {
    expect(flagsOf({ bidDepth25: 1999 })).toEqual(["depth_not_monotonic"]);
    expect(flagsOf({ askDepth200: 5099, bidAskDepth200: 11099 })).toEqual(["depth_not_monotonic"]);
    // Against the widest present band so far, not only the neighbour: Tob 1000 > 50 bps 999.
    expect(
      flagsOf({
        bidDepth10: null,
        bidDepth25: null,
        bidDepth50: 999,
        bidAskDepth50: 5099,
      }),
    ).toEqual(["depth_not_monotonic"]);
  });

  it("accepts equal bands and skips absent ones", () => {
    expect(
      flagsOf({ bidDepthTob: 4000, bidDepth10: 4000, bidDepth25: 4000, bidDepth50: 4000 }),
    ).toEqual([]);
    expect(flagsOf({ askDepthTob: null, askDepth10: null, askDepth25: null })).toEqual([]);
    expect(flagsOf({ bidDepthTob: null, bidDepth10: 3500, bidDepth25: null })).toEqual([]);
  });

  it("flags a total more than 1 % away from the sum of its sides, not at 1 % exactly", () => {
    // 50 bps: 4000 + 4100 = 8100; 1 % is 81.
    expect(flagsOf({ bidAskDepth50: 8181 })).toEqual([]);
    expect(flagsOf({ bidAskDepth50: 8019 })).toEqual([]);
    expect(flagsOf({ bidAskDepth50: 8181.01 })).toEqual(["total_depth_mismatch"]);
    expect(flagsOf({ bidAskDepth200: 11978 })).toEqual(["total_depth_mismatch"]);
    expect(flagsOf({ bidAskDepth100: 10201 })).toEqual([]);
    expect(flagsOf({ bidAskDepth100: 10202 })).toEqual(["total_depth_mismatch"]);
  });

  it("flags maker volume at the top of the book above all maker volume", () => {
    expect(flagsOf({ orderFillVolumeMakerTob: 50000 })).toEqual([]);
    expect(flagsOf({ orderFillVolumeMakerTob: 50001 })).toEqual(["maker_tob_exceeds_maker"]);
    expect(flagsOf({ orderFillVolumeMakerTob: null })).toEqual([]);
  });

  it("names every flag a record raises, in the contract's order", () => {
    expect(flagsOf({ askDepth10: 1, bidAskDepth50: 1, orderFillVolumeMakerTob: 60000 })).toEqual([
      "depth_not_monotonic",
      "total_depth_mismatch",
      "maker_tob_exceeds_maker",
    ]);
  });
});

describe("GET /api/v1/reports?include=quality", () => {
  let t: TestApp;
  const list = (query: string, headers: Record<string, string> = {}) =>
    t.request({ method: "GET", url: `/api/v1/reports?${query}`, key: KEYS.acme, headers });

  beforeAll(async () => {
    t = await startTestApp();
    await submitAll(t, KEYS.acme, [
      v2Record({ date: "2025-03-01" }),
      v2Record({ date: "2025-03-02", bidDepth100: 3999, bidAskDepth200: 1 }),
    ]);
  });
  afterAll(() => t.close());

  it("adds each report's flags to the JSON items", async () => {
    const response = await list("include=quality");
    expect(response.statusCode).toBe(200);
    expect(response.json().items.map((i: { qualityFlags: string[] }) => i.qualityFlags)).toEqual([
      ["depth_not_monotonic", "total_depth_mismatch"],
      [],
    ]);
  });

  it("answers exactly as before without include", async () => {
    const plain = await list("");
    const withFlags = await list("include=quality");
    const stripped = withFlags
      .json()
      .items.map(({ qualityFlags, ...item }: Record<string, unknown>) => item);
    expect(plain.json().items).toEqual(stripped);
    expect(plain.body).not.toContain("qualityFlags");
  });

  it("keeps the flags with each stored version", async () => {
    await submitAll(t, KEYS.acme, [v2Record({ date: "2025-03-02" })]);
    const versions = await sql<{ quality_flags: number }>`
      select v.quality_flags from report_versions v join reports r on r.id = v.report_id
      where r.date = '2025-03-02' order by v.id`.execute(t.database.db);
    expect(versions.rows.map((v) => qualityFlagsOf(v.quality_flags))).toEqual([
      ["depth_not_monotonic", "total_depth_mismatch"],
      [],
    ]);
    const items = (await list("include=quality")).json().items;
    expect(items[0].qualityFlags).toEqual([]);
    await submitAll(t, KEYS.acme, [v2Record({ date: "2025-03-02", bidAskDepth200: 1 })]);
  });

  it("adds a qualityFlags column to CSV, flags separated by spaces", async () => {
    const csv = await list("include=quality", { accept: "text/csv" });
    const [header = "", first = "", second = ""] = csv.body.trim().split("\r\n");
    expect(header.endsWith(",qualityFlags")).toBe(true);
    expect(first.endsWith(",total_depth_mismatch")).toBe(true);
    expect(second.endsWith(",")).toBe(true);
    const paged = await list("include=quality&page=1", { accept: "text/csv" });
    expect(paged.body).toBe(csv.body);
    const plain = await list("", { accept: "text/csv" });
    expect(plain.body).not.toContain("qualityFlags");
  });

  it("ignores any other include value, like an unknown parameter (the listing of section 2 stands)", async () => {
    const plain = (await list("")).body;
    const flagged = (await list("include=quality")).body;
    for (const [query, expected] of [
      ["include=everything", plain],
      ["include=QUALITY", plain],
      ["include=", plain],
      ["include=a&include=b", plain],
      ["include=quality&include=quality", flagged],
      ["include=x,quality", flagged],
      ["include=foo&include=quality", flagged],
    ] as const) {
      const response = await list(query);
      expect(response.statusCode, query).toBe(200);
      expect(response.body, query).toBe(expected);
    }
    const csv = await list("include=foo", { accept: "text/csv" });
    expect(csv.body).toBe((await list("", { accept: "text/csv" })).body);
  });
});
