import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { marketMakerCaller } from "../src/domain/caller.js";
import { createAdminServices } from "../src/services/admin.js";
import { loadFixture } from "../src/services/fixtures.js";
import { createServices } from "../src/services/index.js";
import { freshDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";
import { baseFixture, v2Record } from "./helpers/fixture.js";
import { untilSessionsWait } from "./helpers/lock-waits.js";

/**
 * Reference-data loads and the full eligibility recompute take turns (reference-store's
 * takeTurnToChange): each reads what the one before committed. The interleavings are forced
 * with a transaction that holds reports the way a submission in flight does, so that a load
 * stops at its lock on reports with its own changes written but not committed.
 */
describe.runIf(onPostgres)("reference-data changes at the same time", () => {
  let d: TestDatabase;
  beforeEach(async () => {
    d = await freshDatabase();
    await loadFixture(d.stores, baseFixture(), new Date());
    const services = createServices(d.stores, { referenceDataCheckMs: 0 });
    await services.submitReports(marketMakerCaller("acme"), {
      version: 2,
      body: { data: [v2Record()] },
      dryRun: false,
    });
    expect(await eligibilityReason()).toBeNull();
  });
  afterEach(() => d.close());

  const binance = (marketData: boolean) => ({
    exchanges: [
      {
        id: "binance",
        name: "Binance",
        spot: true,
        derivatives: false,
        marketData,
        group: "binance",
      },
    ],
  });
  const eligibilityReason = async () =>
    (await d.db.selectFrom("reports").select("eligibility_reason").executeTakeFirstOrThrow())
      .eligibility_reason;

  /** A transaction holding reports as a submission in flight does, until `end`. */
  async function submissionInFlight() {
    const client = new pg.Client({ connectionString: (d.config as { url: string }).url });
    await client.connect();
    await client.query("begin");
    await client.query("lock table reports in row exclusive mode");
    return {
      async end() {
        await client.query("commit");
        await client.end();
      },
    };
  }

  it("a second load judges an exchange's market data against the first load's, not the value before it", async () => {
    const inFlight = await submissionInFlight();
    const first = loadFixture(d.stores, binance(false), new Date());
    await untilSessionsWait(d.db, 1);
    const second = loadFixture(d.stores, binance(true), new Date());
    await untilSessionsWait(d.db, 2);
    await inFlight.end();
    expect(await first).toMatchObject({ changed: 1, eligibilityChanged: 1 });
    // Before: it read market data as true (the first load had not committed), wrote true over
    // the first load's false, judged that no change, and left the report ineligible.
    expect(await second).toMatchObject({ changed: 1, eligibilityChanged: 1 });
    expect(await eligibilityReason()).toBeNull();
  });

  it("a full eligibility recompute reads the reference data after a load in progress commits", async () => {
    const inFlight = await submissionInFlight();
    const load = loadFixture(d.stores, binance(false), new Date());
    await untilSessionsWait(d.db, 1);
    const admin = createAdminServices(d.stores, { coinGecko: () => never() });
    const recompute = admin.recomputeEligibility();
    await untilSessionsWait(d.db, 2);
    await inFlight.end();
    await load;
    await recompute;
    // Before: it read the data before the load and wrote "eligible" over the load's result.
    expect(await eligibilityReason()).toBe("exchange_market_data_missing");
  });
});

function never(): never {
  throw new Error("no CoinGecko here");
}
