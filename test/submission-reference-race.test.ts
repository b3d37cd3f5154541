import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadFixture } from "../src/services/fixtures.js";
import { createServices } from "../src/services/index.js";
import { freshDatabase, type TestDatabase } from "./helpers/database.js";
import { baseFixture, v2Record } from "./helpers/fixture.js";

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
  await loadFixture(database.db, baseFixture(), new Date());
});
afterAll(async () => database?.close());

describe("a submission racing a market-data load", () => {
  it("is checked again against the new reference data instead of storing a stale eligibility", async () => {
    // This process checks for reference-data changes only once an hour: it keeps serving the
    // copy it loaded, as a busy process between two checks would.
    const services = createServices(database.db, { referenceDataCheckMs: 3_600_000 });
    const caller = { organizationId: "acme", apiKeyId: null };
    await services.referenceData.current();

    // Another process adds the market for AAVE/USDT on binance.
    await loadFixture(
      database.db,
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
});
