import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v1Record, v2Record } from "./helpers/fixture.js";
import {
  dayAfter,
  listedOn,
  problemsOf,
  rowCounts,
  submit,
  submitOk,
} from "./helpers/submission.js";

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

const V2_ONLY_NULLS = {
  bidDepthTob: null,
  bidDepth10: null,
  bidDepth25: null,
  askDepthTob: null,
  askDepth10: null,
  askDepth25: null,
  topOfBookPercentage: null,
  orderFillVolumeMakerTob: null,
  type: null,
};

/** Every stored version of the report of one date, oldest first. */
async function versionsOn(date: string): Promise<Record<string, unknown>[]> {
  const result = await sql<Record<string, unknown>>`
    select v.schema_version, v.bid_depth_50, v.bid_depth_tob, v.type from report_versions v
    join reports r on r.id = v.report_id where r.date = ${date}::date order by v.id`.execute(
    t.database.db,
  );
  return result.rows;
}

describe("created and updated counts", () => {
  it("new keys are counted as created and known keys as updated", async () => {
    const first = [0, 1, 2].map((i) => v2Record({ date: dayAfter("2024-02-01", i) }));
    expect(await submitOk(t, 2, first)).toEqual({ createdCount: 3, updatedCount: 0 });
    const second = [1, 2, 3, 4].map((i) => v2Record({ date: dayAfter("2024-02-01", i) }));
    expect(await submitOk(t, 2, second)).toEqual({ createdCount: 2, updatedCount: 2 });
  });

  it("keys are per organization: another organization's same key is created anew", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-02-10" })]);
    const other = await submit(
      t,
      2,
      { data: [v2Record({ date: "2024-02-10" })] },
      {
        key: KEYS.globex,
      },
    );
    expect(other.json()).toEqual({ createdCount: 1, updatedCount: 0 });
  });
});

describe("atomicity and dry runs", () => {
  it("a batch with one bad record stores nothing of it", async () => {
    const before = await rowCounts(t);
    const data = [0, 1, 2, 3].map((i) => v2Record({ date: dayAfter("2024-03-01", i) }));
    data.push(v2Record({ date: "2024-03-09", bidDepth50: -5 }));
    expect(problemsOf(await submit(t, 2, { data }))).toHaveLength(1);
    expect(await rowCounts(t)).toEqual(before);
  });

  it("a batch whose last record duplicates another stores nothing of it", async () => {
    const before = await rowCounts(t);
    const data = [v2Record({ date: "2024-03-10" }), v2Record({ date: "2024-03-10" })];
    expect(problemsOf(await submit(t, 2, { data }))).toHaveLength(1);
    expect(await rowCounts(t)).toEqual(before);
  });

  it.each([
    "true",
    "TRUE",
    "True",
  ])("a dry run (x-dry-run: %s) returns the exact counts and writes no report or version", async (header) => {
    const base = { true: "2024-04-01", TRUE: "2024-04-11", True: "2024-04-21" }[header] ?? "";
    await submitOk(t, 2, [v2Record({ date: base }), v2Record({ date: dayAfter(base, 1) })]);
    const data = [0, 1, 2, 3, 4].map((i) => v2Record({ date: dayAfter(base, i), bidDepth50: 7 }));
    const before = await rowCounts(t);
    const dry = await submitOk(t, 2, data, { "x-dry-run": header });
    expect(dry).toEqual({ createdCount: 3, updatedCount: 2 });
    expect(await rowCounts(t)).toEqual(before);
    expect((await listedOn(t, base)).bidDepth50).toBe(4000);
    expect(await submitOk(t, 2, data)).toEqual(dry);
  });

  it("a v1 dry run counts like the real v1 submission", async () => {
    await submitOk(t, 1, [v1Record({ date: "2024-05-01" })]);
    const data = [v1Record({ date: "2024-05-01" }), v1Record({ date: "2024-05-02" })];
    const before = await rowCounts(t);
    expect(await submitOk(t, 1, data, { "x-dry-run": "true" })).toEqual({
      createdCount: 1,
      updatedCount: 1,
    });
    expect(await rowCounts(t)).toEqual(before);
  });

  it("x-dry-run: false stores the batch", async () => {
    const before = await rowCounts(t);
    await submitOk(t, 2, [v2Record({ date: "2024-05-05" })], { "x-dry-run": "false" });
    expect(await rowCounts(t)).toEqual({
      reports: before.reports + 1,
      versions: before.versions + 1,
    });
  });

  it.each([
    "yes",
    "1",
    "",
  ])("x-dry-run: '%s' is a 400 at path x-dry-run and stores nothing", async (header) => {
    const before = await rowCounts(t);
    const response = await submit(
      t,
      2,
      { data: [v2Record({ date: "2024-05-06" })] },
      {
        headers: { "x-dry-run": header },
      },
    );
    const problems = problemsOf(response);
    expect(problems).toEqual([{ path: "x-dry-run", message: expect.any(String) }]);
    expect(await rowCounts(t)).toEqual(before);
  });

  it("a dry run of an invalid batch is refused like the real submission", async () => {
    const data = [v2Record({ date: "2024-05-07", type: "x" })];
    const dry = await submit(t, 2, { data }, { headers: { "x-dry-run": "true" } });
    expect(dry.json()).toEqual((await submit(t, 2, { data })).json());
  });
});

describe("history and updates", () => {
  it("every accepted version is kept and the current row is the latest", async () => {
    for (const [version, value] of [
      [2, 1],
      [1, 2],
      [2, 3],
    ] as const) {
      const record = version === 2 ? v2Record : v1Record;
      await submitOk(t, version, [record({ date: "2024-06-01", bidDepth50: value })]);
    }
    expect(await versionsOn("2024-06-01")).toEqual([
      { schema_version: 2, bid_depth_50: 1, bid_depth_tob: 1000, type: "project" },
      { schema_version: 1, bid_depth_50: 2, bid_depth_tob: null, type: null },
      { schema_version: 2, bid_depth_50: 3, bid_depth_tob: 1000, type: "project" },
    ]);
    expect((await listedOn(t, "2024-06-01")).bidDepth50).toBe(3);
  });

  it("v1 applies its defaults: 0 for depths and volumes, 100 for the spread", async () => {
    const record = { date: "2024-06-02", exchangeId: "binance", baseCoinId: "chainlink" };
    await submitOk(t, 1, [{ ...record, quoteCoinId: "tether" }]);
    expect(await listedOn(t, "2024-06-02")).toMatchObject({
      ...V2_ONLY_NULLS,
      bidDepth50: 0,
      askDepth50: 0,
      bidDepth100: 0,
      askDepth100: 0,
      bidDepth200: 0,
      askDepth200: 0,
      bidAskDepth50: 0,
      bidAskDepth100: 0,
      bidAskDepth200: 0,
      bidAskSpread: 100,
      orderFillVolumeMaker: 0,
      orderFillVolumeTaker: 0,
    });
  });

  it("v2-only fields sent to v1 are ignored: the instrument type comes from the exchange", async () => {
    const extra = { topOfBookPercentage: 50, type: "prop", instrumentType: "perp" };
    const counts = await submitOk(t, 1, [v1Record({ date: "2024-06-05", ...extra })]);
    expect(counts).toEqual({ createdCount: 1, updatedCount: 0 });
    expect(await listedOn(t, "2024-06-05")).toMatchObject({
      ...V2_ONLY_NULLS,
      exchangeId: "binance",
    });
  });

  it("a null in a v1 numeric field is refused, not defaulted", async () => {
    const response = await submit(t, 1, { data: [v1Record({ bidAskSpread: null })] });
    expect(problemsOf(response)).toEqual([
      { path: "data.0.bidAskSpread", message: "Expected number, received null" },
    ]);
  });

  it("a v1 update of a v2 report sets the v2-only fields and type to null", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-06-03" })]);
    const counts = await submitOk(t, 1, [v1Record({ date: "2024-06-03", bidDepth50: 9 })]);
    expect(counts).toEqual({ createdCount: 0, updatedCount: 1 });
    const item = await listedOn(t, "2024-06-03");
    expect(item).toMatchObject({ ...V2_ONLY_NULLS, bidDepth50: 9, bidAskSpread: 100 });
  });

  it("a v2 update of a v1 report fills the v2-only fields and type", async () => {
    await submitOk(t, 1, [v1Record({ date: "2024-06-04" })]);
    const record = v2Record({ date: "2024-06-04", type: "prop" });
    expect(await submitOk(t, 2, [record])).toEqual({ createdCount: 0, updatedCount: 1 });
    // Every metric and the type as sent (the identity fields have their own tests).
    const { instrumentType: _i, quoteCoinId: _q, exchangeId: _e, ...sent } = record;
    expect(await listedOn(t, "2024-06-04")).toMatchObject(sent);
  });
});

describe("exchange routing", () => {
  it("spot data named for binance_futures is stored under binance", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-07-01", exchangeId: "binance_futures" })]);
    const item = await listedOn(t, "2024-07-01");
    expect(item).toMatchObject({ exchangeId: "binance", exchangeName: "Binance" });
  });

  it("perp data named for binance is stored under binance_futures", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-07-02", instrumentType: "perp" })]);
    const item = await listedOn(t, "2024-07-02");
    expect(item).toMatchObject({
      exchangeId: "binance_futures",
      exchangeName: "Binance (Futures)",
    });
  });

  it("routed and direct submissions of one market are one record", async () => {
    await submitOk(t, 2, [v2Record({ date: "2024-07-03", exchangeId: "binance_futures" })]);
    expect(await submitOk(t, 2, [v2Record({ date: "2024-07-03" })])).toEqual({
      createdCount: 0,
      updatedCount: 1,
    });
  });

  it.each([
    [
      "spot",
      "deribit",
      "Exchange 'Deribit' is not a spot exchange; set instrumentType to 'perp' for perpetual/derivatives data",
    ],
    [
      "perp",
      "kraken",
      "Exchange 'Kraken' is not a derivatives exchange; set instrumentType to 'spot' for spot data",
    ],
  ])("%s data for %s, with no family to route to, is refused naming the exchange", async (instrumentType, exchangeId, message) => {
    const data = [v2Record({ date: "2024-07-04", instrumentType, exchangeId })];
    expect(problemsOf(await submit(t, 2, { data }))).toEqual([
      { path: "data.0.instrumentType", message },
    ]);
  });

  it("a v1 record for a spot exchange is stored as spot: v2 spot data updates it", async () => {
    await submitOk(t, 1, [v1Record({ date: "2024-07-05" })]);
    const v2 = v2Record({ date: "2024-07-05", exchangeId: "binance_futures" });
    expect(await submitOk(t, 2, [v2])).toEqual({ createdCount: 0, updatedCount: 1 });
  });

  it("a v1 record for an exchange without spot markets is stored as perp there", async () => {
    await submitOk(t, 1, [v1Record({ date: "2024-07-06", exchangeId: "binance_futures" })]);
    const perp = v2Record({ date: "2024-07-06", exchangeId: "binance", instrumentType: "perp" });
    expect(await submitOk(t, 2, [perp])).toEqual({ createdCount: 0, updatedCount: 1 });
    expect(await listedOn(t, "2024-07-06")).toMatchObject({ exchangeId: "binance_futures" });
  });

  it("a v1 record for a derivatives-only exchange is accepted as perp", async () => {
    const record = v1Record({ date: "2024-07-07", exchangeId: "deribit" });
    expect(await submitOk(t, 1, [record])).toEqual({ createdCount: 1, updatedCount: 0 });
    const perp = v2Record({ date: "2024-07-07", exchangeId: "deribit", instrumentType: "perp" });
    expect(await submitOk(t, 2, [perp])).toEqual({ createdCount: 0, updatedCount: 1 });
  });
});

describe("concurrent submissions", () => {
  /** A deterministic shuffle (a linear congruential generator seeded per request). */
  function shuffled<T>(items: T[], seed: number): T[] {
    const out = [...items];
    let state = seed;
    for (let i = out.length - 1; i > 0; i--) {
      state = (state * 1103515245 + 12345) % 2147483648;
      const j = state % (i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  }

  it("overlapping keys sent at once are created exactly once and counted exactly", async () => {
    const keys = Array.from({ length: 100 }, (_, i) =>
      v2Record({
        date: dayAfter("2022-01-01", i % 50),
        baseCoinId: i < 50 ? "chainlink" : "uniswap",
      }),
    );
    const before = await rowCounts(t);
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, n) => submit(t, 2, { data: shuffled(keys, n + 1) })),
    );
    for (const r of responses) expect(r.statusCode, r.body).toBe(201);
    const counts = responses.map((r) => r.json() as { createdCount: number; updatedCount: number });
    expect(counts.reduce((sum, c) => sum + c.createdCount, 0)).toBe(100);
    expect(counts.reduce((sum, c) => sum + c.createdCount + c.updatedCount, 0)).toBe(800);
    expect(await rowCounts(t)).toEqual({
      reports: before.reports + 100,
      versions: before.versions + 800,
    });
  });
});
