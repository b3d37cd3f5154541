import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plausibilityMask, qualityFlagsOf } from "../src/domain/quality.js";
import { type Report, V1_METRICS, type V1Metric } from "../src/domain/report.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
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

  it("compares a total with sides whose sum passes the largest double", () => {
    const sides = (depth: number) =>
      Object.fromEntries(
        [50, 100, 200].flatMap((band) => [
          [`bidDepth${band}`, depth],
          [`askDepth${band}`, depth],
        ]),
      );
    const totals = (depth: number) => ({
      bidAskDepth50: depth,
      bidAskDepth100: depth,
      bidAskDepth200: depth,
    });
    // 1e308 + 1e308 is past Number.MAX_VALUE: a total of 1e308 is half of it.
    expect(flagsOf({ ...sides(1e308), ...totals(1e308) })).toEqual(["total_depth_mismatch"]);
    // 0.9e308 + 0.9e308 = 1.8e308; the largest double (1.7977e308) is within 1 % of it.
    expect(flagsOf({ ...sides(0.9e308), ...totals(Number.MAX_VALUE) })).toEqual([]);
    expect(flagsOf({ ...sides(0.9e308), ...totals(1.7e308) })).toEqual(["total_depth_mismatch"]);
  });

  it("flags maker volume at the top of the book above all maker volume", () => {
    expect(flagsOf({ orderFillVolumeMakerTob: 50000 })).toEqual([]);
    expect(flagsOf({ orderFillVolumeMakerTob: 50001 })).toEqual(["maker_tob_exceeds_maker"]);
    expect(flagsOf({ orderFillVolumeMakerTob: null })).toEqual([]);
  });

  it("skips what a v1 record left out: stored at the spec's defaults, not reported", () => {
    const sent = { bidDepth50: 4000, askDepth50: 4100, bidDepth200: 6000 };
    const omitted = V1_METRICS.filter((m) => !(m in sent));
    const metrics = {
      ...(Object.fromEntries(V1_METRICS.map((m) => [m, 0])) as Record<V1Metric, number>),
      bidAskSpread: 100,
      ...sent,
    };
    // Read as sent values, the defaults would shrink the book (100 bps 0 < 50 bps 4000) and
    // miss every total (0 against 8100).
    expect(qualityFlagsOf(plausibilityMask(metrics))).toEqual([
      "depth_not_monotonic",
      "total_depth_mismatch",
    ]);
    expect(qualityFlagsOf(plausibilityMask(metrics, omitted))).toEqual([]);
    // What it did send is still checked: a total it sent, against the sides it sent.
    const withTotal = { ...metrics, bidAskDepth50: 9000, bidDepth100: 3000 };
    const stillOmitted = omitted.filter((m) => m !== "bidAskDepth50" && m !== "bidDepth100");
    expect(qualityFlagsOf(plausibilityMask(withTotal, stillOmitted))).toEqual([
      "depth_not_monotonic",
      "total_depth_mismatch",
    ]);
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

describe("quality flags of v1 records", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("flags a v1 record only by the values it sent", async () => {
    await submitAll(t, KEYS.acme, [v1Record({ date: "2025-03-10", bidDepth200: 6000 })], 1);
    await submitAll(
      t,
      KEYS.acme,
      [v1Record({ date: "2025-03-11", bidDepth200: 3000, bidAskDepth50: 1 })],
      1,
    );
    const items = (
      await t.request({ url: "/api/v1/reports?include=quality", key: KEYS.acme })
    ).json().items;
    expect(
      items.map((i: { date: string; qualityFlags: string[] }) => [i.date, i.qualityFlags]),
    ).toEqual([
      ["2025-03-11", ["depth_not_monotonic", "total_depth_mismatch"]],
      ["2025-03-10", []],
    ]);
    // The listing still shows what v1 stores for an omitted metric: the spec's default.
    expect(items[1].bidAskDepth50).toBe(0);
  });
});
