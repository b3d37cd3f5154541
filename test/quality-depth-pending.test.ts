import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createQualityAdmin } from "../src/services/quality-admin.js";
import type { Stores } from "../src/store/stores.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS } from "./helpers/fixture.js";
import {
  depthSnapshot,
  loadDepthSnapshots,
  qualityFlagsOn,
  withDepth200,
} from "./helpers/public-depth.js";
import { submitAll } from "./helpers/reports.js";

// Migration 024: a depth load commits the public depth, then recomputes the flags of the days
// it changed. When the recomputation fails, or the process stops, in between, the days stay
// noted as pending, and the next load (or `quality recompute`) recomputes them too. Before,
// nothing did: loading the same snapshot again changes no day.

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** The stores with a recomputation that fails after the depth committed (a lost connection). */
function failingRecompute(stores: Stores): Stores {
  const lost = async () => {
    throw new Error("Connection terminated unexpectedly");
  };
  const qualityDepth = { ...stores.qualityDepth, recomputeRange: lost, recomputeReports: lost };
  return { ...stores, qualityDepth };
}

async function pendingDays(): Promise<string[]> {
  const r = await sql<{ day: string }>`
    select to_char(day, 'YYYY-MM-DD') as day from public_depth_recompute_pending
    order by day`.execute(t.database.db);
  return r.rows.map((row) => row.day);
}

const below = (date: string, takenAt = `${date}T10:00:00Z`) =>
  depthSnapshot(date, { takenAt, costToMoveDownUsd: 5000, costToMoveUpUsd: 9000 });

describe("public depth whose recomputation did not finish", () => {
  it("is recomputed by the next depth load, whatever days that load brings", async () => {
    await submitAll(t, KEYS.acme, [withDepth200("2025-04-01", 6000)]);
    const failed = loadDepthSnapshots(failingRecompute(t.database.stores), [below("2025-04-01")]);
    await expect(failed).rejects.toThrow("Connection terminated unexpectedly");
    // The depth is stored, the flag not yet recomputed: the day is pending.
    expect(await qualityFlagsOn(t, "2025-04-01")).toEqual([]);
    expect(await pendingDays()).toEqual(["2025-04-01"]);

    // The same snapshot again changes no day; a load of another day recomputes this one too.
    await loadDepthSnapshots(t.database.stores, [below("2025-04-01")]);
    await loadDepthSnapshots(t.database.stores, [below("2025-04-20")]);
    expect(await qualityFlagsOn(t, "2025-04-01")).toEqual(["exceeds_public_depth"]);
    expect(await pendingDays()).toEqual([]);
  });

  it("is recomputed by `quality recompute`, and the note cleared", async () => {
    await submitAll(t, KEYS.acme, [withDepth200("2025-04-02", 6000)]);
    const failed = loadDepthSnapshots(failingRecompute(t.database.stores), [below("2025-04-02")]);
    await expect(failed).rejects.toThrow();
    expect(await pendingDays()).toEqual(["2025-04-02"]);
    const admin = createQualityAdmin(t.database.stores, {
      now: () => new Date(),
      coinGecko: () => {
        throw new Error("not used");
      },
    });
    expect((await admin.recomputeFlags()).changed).toBeGreaterThanOrEqual(1);
    expect(await qualityFlagsOn(t, "2025-04-02")).toEqual(["exceeds_public_depth"]);
    expect(await pendingDays()).toEqual([]);
  });

  it("stays pending when noted again while a recomputation ran: that one read the older note", async () => {
    const depth = t.database.stores.qualityDepth;
    await depth.record([parsedSnapshot("2025-04-03", "2025-04-03T10:00:00Z")]);
    const read = await depth.pendingRecomputes();
    expect(read.map((p) => p.day.date)).toEqual(["2025-04-03"]);
    // A later snapshot of the same day lands before the first recomputation ends.
    await depth.record([parsedSnapshot("2025-04-03", "2025-04-03T20:00:00Z")]);
    await depth.clearPendingRecomputes(read);
    expect(await pendingDays()).toEqual(["2025-04-03"]);
    await loadDepthSnapshots(t.database.stores, []);
    expect(await pendingDays()).toEqual([]);
  });
});

function parsedSnapshot(date: string, takenAt: string) {
  return {
    exchangeId: "binance",
    baseCoinId: "chainlink",
    instrumentType: "spot" as const,
    quoteSymbol: "USDT",
    quoteCoinId: "tether",
    date,
    takenAt: new Date(takenAt),
    costToMoveUpUsd: 9000,
    costToMoveDownUsd: 5000,
    bidAskSpreadPercentage: null,
    volumeUsd: null,
    source: "fixture" as const,
  };
}
