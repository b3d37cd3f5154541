import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recomputePublicDepthFlags } from "../src/services/quality-recompute.js";
import type { Stores } from "../src/store/stores.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Record } from "./helpers/fixture.js";
import { depthSnapshot, loadDepthSnapshots, withDepth200 } from "./helpers/public-depth.js";
import { submitAll } from "./helpers/reports.js";

// A depth load changing a few market-days recomputes the reports of those days only, found
// through each organization's key index; it used to walk every report id of the table (5 s at
// 10 M reports for one market-day). Past a bound of index probes it walks the table again.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** The stores, with the recomputation's calls written down. */
function watched(stores: Stores) {
  const calls = { ranges: 0, reports: [] as number[][] };
  const depth = stores.qualityDepth;
  const qualityDepth = {
    ...depth,
    recomputeRange: (...args: Parameters<typeof depth.recomputeRange>) => {
      calls.ranges++;
      return depth.recomputeRange(...args);
    },
    recomputeReports: (ids: number[]) => {
      calls.reports.push(ids);
      return depth.recomputeReports(ids);
    },
  };
  return { stores: { ...stores, qualityDepth }, calls };
}

async function idsOn(date: string, baseCoinId = "chainlink"): Promise<number[]> {
  const r = await sql<{ id: string }>`
    select id::text as id from reports
    where date = ${date} and exchange_id = 'binance' and base_coin_id = ${baseCoinId}
    order by id`.execute(t.database.db);
  return r.rows.map((row) => Number(row.id));
}

async function flagsOf(ids: number[]): Promise<number[]> {
  const r = await sql<{ flags: number }>`
    select quality_flags as flags from reports where id = any(${ids.map(String)}::bigint[])
    order by id`.execute(t.database.db);
  return r.rows.map((row) => row.flags);
}

const below = (date: string) =>
  depthSnapshot(date, {
    takenAt: `${date}T10:00:00Z`,
    costToMoveDownUsd: 5000,
    costToMoveUpUsd: 9000,
  });

describe("a depth load's recomputation", () => {
  it("reads the changed market-day's reports of every organization, and no other", async () => {
    await submitAll(t, KEYS.acme, [
      withDepth200("2025-05-01", 6000),
      withDepth200("2025-05-02", 6000),
      v2Record({ date: "2025-05-01", baseCoinId: "uniswap" }),
    ]);
    await submitAll(t, KEYS.globex, [withDepth200("2025-05-01", 6000)]);
    const day = await idsOn("2025-05-01");
    expect(day).toHaveLength(2);

    const { stores, calls } = watched(t.database.stores);
    await loadDepthSnapshots(stores, [below("2025-05-01")]);

    expect(calls).toEqual({ ranges: 0, reports: [day] });
    expect((await flagsOf(day)).every((flags) => flags !== 0)).toBe(true);
    expect(await flagsOf(await idsOn("2025-05-01", "uniswap"))).toEqual([0]);
    expect(await flagsOf(await idsOn("2025-05-02"))).toEqual([0]);
  });

  it("walks the table when the market-days would take more index probes than allowed", async () => {
    await submitAll(t, KEYS.acme, [withDepth200("2025-05-10", 6000)]);
    await submitAll(t, KEYS.globex, [withDepth200("2025-05-10", 6000)]);
    const [snapshot] = await t.database.stores.qualityDepth.record([
      {
        exchangeId: "binance",
        baseCoinId: "chainlink",
        instrumentType: "spot",
        quoteSymbol: "USDT",
        quoteCoinId: "tether",
        date: "2025-05-10",
        takenAt: new Date("2025-05-10T10:00:00Z"),
        costToMoveUpUsd: 9000,
        costToMoveDownUsd: 5000,
        bidAskSpreadPercentage: null,
        volumeUsd: null,
        source: "fixture",
      },
    ]);
    expect(snapshot).toBeDefined();

    const { stores, calls } = watched(t.database.stores);
    // Two organizations and one market-day are two probes: one allowed is too few.
    const result = await recomputePublicDepthFlags(stores, {
      days: snapshot ? [snapshot] : [],
      maxProbes: 1,
    });

    expect(calls.reports).toEqual([]);
    expect(calls.ranges).toBeGreaterThan(0);
    expect(result.changed).toBe(2);
    expect((await flagsOf(await idsOn("2025-05-10"))).every((flags) => flags !== 0)).toBe(true);
  });
});
