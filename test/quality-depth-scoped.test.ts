import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXCEEDS_PUBLIC_DEPTH_BIT, type MarketDay } from "../src/domain/quality.js";
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

/** Whether each report (by id order) has `exceeds_public_depth`. */
async function exceeding(ids: number[]): Promise<boolean[]> {
  const r = await sql<{ flags: number }>`
    select quality_flags as flags from reports where id = any(${ids.map(String)}::bigint[])
    order by id`.execute(t.database.db);
  return r.rows.map((row) => (row.flags & EXCEEDS_PUBLIC_DEPTH_BIT) !== 0);
}

/** Stores a day's snapshot without recomputing, and without leaving the day pending. */
async function recordDepth(date: string): Promise<MarketDay[]> {
  const depth = t.database.stores.qualityDepth;
  const days = await depth.record([
    {
      exchangeId: "binance",
      baseCoinId: "chainlink",
      instrumentType: "spot",
      quoteSymbol: "USDT",
      quoteCoinId: "tether",
      date,
      takenAt: new Date(`${date}T10:00:00Z`),
      costToMoveUpUsd: 9000,
      costToMoveDownUsd: 5000,
      bidAskSpreadPercentage: null,
      volumeUsd: null,
      source: "fixture",
    },
  ]);
  await depth.clearPendingRecomputes(await depth.pendingRecomputes());
  return days;
}

async function organizationCount(): Promise<number> {
  const r = await sql<{ n: number }>`select count(*)::int as n from organizations`.execute(
    t.database.db,
  );
  return r.rows[0]?.n ?? 0;
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
    const otherDay = await idsOn("2025-05-02");
    expect(day).toHaveLength(2);
    expect(await exceeding(day)).toEqual([false, false]);
    // A stale flag on another day: recomputed, it would be cleared (that day has no depth).
    await sql`update reports set quality_flags = quality_flags | ${EXCEEDS_PUBLIC_DEPTH_BIT}
      where id = any(${otherDay.map(String)}::bigint[])`.execute(t.database.db);

    const { stores, calls } = watched(t.database.stores);
    await loadDepthSnapshots(stores, [below("2025-05-01")]);

    expect(calls).toEqual({ ranges: 0, reports: [day] });
    expect(await exceeding(day)).toEqual([true, true]);
    expect(await exceeding(otherDay)).toEqual([true]);
    expect(await exceeding(await idsOn("2025-05-01", "uniswap"))).toEqual([false]);
  });

  it("walks the table when the market-days would take more index probes than allowed", async () => {
    await submitAll(t, KEYS.acme, [withDepth200("2025-05-10", 6000)]);
    await submitAll(t, KEYS.globex, [withDepth200("2025-05-10", 6000)]);
    const days = await recordDepth("2025-05-10");
    expect(days).toHaveLength(1);

    const { stores, calls } = watched(t.database.stores);
    // Every organization is a probe for the one market-day: one fewer is too few.
    const maxScoped = (await organizationCount()) - 1;
    const result = await recomputePublicDepthFlags(stores, { days, maxScoped });

    expect(calls.reports).toEqual([]);
    expect(calls.ranges).toBeGreaterThan(0);
    expect(result.changed).toBe(2);
    expect(await exceeding(await idsOn("2025-05-10"))).toEqual([true, true]);
  });

  it("walks the table when the probes would find more reports than allowed", async () => {
    // One market-day, whatever the quote: acme's three quotes and globex's one are four reports.
    const quotes = ["tether", "usd-coin", "bitcoin"];
    await submitAll(
      t,
      KEYS.acme,
      quotes.map((quoteCoinId) => ({ ...withDepth200("2025-05-20", 6000), quoteCoinId })),
    );
    await submitAll(t, KEYS.globex, [withDepth200("2025-05-20", 6000)]);
    const days = await recordDepth("2025-05-20");
    const organizations = await organizationCount();
    expect(organizations).toBeLessThan(4);

    const { stores, calls } = watched(t.database.stores);
    // As many as the probes: the four reports they find are too many.
    const result = await recomputePublicDepthFlags(stores, { days, maxScoped: organizations });

    expect(calls.reports).toEqual([]);
    expect(calls.ranges).toBeGreaterThan(0);
    // The snapshot is of the tether market: the other quotes have no public depth.
    expect(result.changed).toBe(2);
  });
});
