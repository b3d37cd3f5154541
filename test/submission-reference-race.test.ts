import { setTimeout as sleep } from "node:timers/promises";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marketMakerCaller } from "../src/domain/caller.js";
import { METRICS, type Report } from "../src/domain/report.js";
import { loadFixture } from "../src/services/fixtures.js";
import { createServices } from "../src/services/index.js";
import { createReferenceStore } from "../src/store/reference-store.js";
import { createReportStore } from "../src/store/report-store.js";
import type { Tables } from "../src/store/tables.js";
import { freshDatabase, type TestDatabase } from "./helpers/database.js";
import { baseFixture, v2Record } from "./helpers/fixture.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
  await loadFixture(database.stores, baseFixture(), new Date());
});
afterAll(async () => database?.close());

/** The market that makes AAVE against `quoteCoinId` on `exchangeId` eligible. */
const aaveMarket = (exchangeId: string, quoteCoinId = "tether", quoteSymbol = "USDT") => ({
  exchangeId,
  baseCoinId: "aave",
  quoteCoinId,
  quoteSymbol,
  instrumentType: "spot" as const,
  collectedSince: "2024-01-01",
});

/** Whether `promise` is still pending after `ms`. */
async function stillPendingAfter(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol("pending");
  return (await Promise.race([promise.catch(() => undefined), sleep(ms, pending)])) === pending;
}

async function eligibilityOf(date: string) {
  return database.db
    .selectFrom("reports")
    .select(["eligibility_status", "eligibility_reason"])
    .where("base_coin_id", "=", "aave")
    .where("date", "=", date)
    .executeTakeFirstOrThrow();
}

describe("a submission racing a market-data load", () => {
  it("is checked again against the new reference data instead of storing a stale eligibility", async () => {
    // This process checks for reference-data changes only once an hour: it keeps serving the
    // copy it loaded, as a busy process between two checks would.
    const services = createServices(database.stores, { referenceDataCheckMs: 3_600_000 });
    const caller = marketMakerCaller("acme");
    await services.referenceData.current();

    // Another process adds the market for AAVE/USDT on binance.
    await loadFixture(
      database.stores,
      {
        markets: [
          {
            exchangeId: "binance",
            baseCoinId: "aave",
            quoteCoinId: "tether",
            quoteSymbol: "USDT",
            instrumentType: "spot",
            collectedSince: "2024-01-01",
          },
        ],
      },
      new Date(),
    );

    const result = await services.submitReports(caller, {
      version: 2,
      dryRun: false,
      body: { data: [v2Record({ baseCoinId: "aave", date: "2025-02-01" })] },
    });
    expect(result).toEqual({ createdCount: 1, updatedCount: 0 });
    const row = await database.db
      .selectFrom("reports")
      .select(["eligibility_status", "eligibility_reason"])
      .where("base_coin_id", "=", "aave")
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ eligibility_status: "eligible", eligibility_reason: null });
    const versions = await database.db
      .selectFrom("report_versions")
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(versions.n)).toBe(1);
    const log = await database.db.selectFrom("submissions").select(["created_count"]).execute();
    expect(log).toEqual([{ created_count: 1 }]);
  });

  it("waits for a load in flight, then is checked against the data it committed", async () => {
    const services = createServices(database.stores, { referenceDataCheckMs: 3_600_000 });
    await services.referenceData.current();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let loadHoldsLock = () => {};
    const locked = new Promise<void>((resolve) => {
      loadHoldsLock = resolve;
    });
    // A load that has bumped the version (and so holds its lock) but not yet committed.
    const load = database.db.transaction().execute(async (trx) => {
      await createReferenceStore(trx).upsert({
        coins: [],
        exchanges: [],
        markets: [aaveMarket("kraken")],
      });
      loadHoldsLock();
      await held;
    });
    await locked;

    const submission = services.submitReports(marketMakerCaller("acme"), {
      version: 2,
      dryRun: false,
      body: {
        data: [v2Record({ exchangeId: "kraken", baseCoinId: "aave", date: "2025-02-02" })],
      },
    });
    expect(await stillPendingAfter(submission, 300)).toBe(true);
    release();
    await load;
    expect(await submission).toEqual({ createdCount: 1, updatedCount: 0 });
    expect(await eligibilityOf("2025-02-02")).toEqual({
      eligibility_status: "eligible",
      eligibility_reason: null,
    });
  });

  it("is waited for by a load, whose eligibility recomputation then covers it", async () => {
    const { version } = await createReferenceStore(database.db).snapshot();
    const report: Report = {
      date: "2025-02-03",
      exchangeId: "kraken",
      baseCoinId: "aave",
      quoteKey: "usd-coin",
      instrumentType: "spot",
      quoteCoinId: "usd-coin",
      quoteCoinSymbol: null,
      type: "project",
      schemaVersion: 2,
      metrics: Object.fromEntries(METRICS.map((m) => [m, 1])) as Report["metrics"],
      // Right for the reference data it was checked against: kraken has no AAVE/USDC yet.
      eligibilityReason: "pair_not_found",
    };
    let commit = () => {};
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let written = () => {};
    const inFlight = new Promise<void>((resolve) => {
      written = resolve;
    });
    // A batch written but not yet committed when the load starts.
    const batch = database.db.transaction().execute(async (trx) => {
      const stored = await createReportStore(trx).upsert(
        {
          id: crypto.randomUUID(),
          organizationId: "acme",
          apiKeyId: null,
          schemaVersion: 2,
          receivedAt: new Date(),
        },
        [report],
        version,
      );
      expect(stored).toEqual({ createdCount: 1, updatedCount: 0 });
      written();
      await held;
    });
    await inFlight;

    const load = loadFixture(
      database.stores,
      { markets: [aaveMarket("kraken", "usd-coin", "USDC")] },
      new Date(),
    );
    expect(await stillPendingAfter(load, 300)).toBe(true);
    commit();
    await batch;
    expect((await load).eligibilityChanged).toBeGreaterThanOrEqual(1);
    expect(await eligibilityOf("2025-02-03")).toEqual({
      eligibility_status: "eligible",
      eligibility_reason: null,
    });
  });

  it("plans what it runs under its lock without JIT compilation, and nothing else", async () => {
    const jit = async (db: Kysely<Tables>) =>
      (await sql<{ jit: string }>`select current_setting('jit') as jit`.execute(db)).rows[0]?.jit;
    const outside = await jit(database.db);
    const rolledBack = new Error("rolled back");
    let underLock: string | undefined;
    await database.db
      .transaction()
      .execute(async (trx) => {
        await createReferenceStore(trx).upsert({
          coins: [],
          exchanges: [],
          markets: [{ ...aaveMarket("binance"), collectedSince: "2024-06-01" }],
        });
        underLock = await jit(trx);
        throw rolledBack;
      })
      .catch((error: unknown) => {
        if (error !== rolledBack) throw error;
      });
    expect(underLock).toBe("off");
    expect(await jit(database.db)).toBe(outside);
  });
});
