import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chunkAfter, type ListCursor, type ListFilter } from "../src/store/report-listing.js";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { KEYS, v2Records } from "./helpers/fixture.js";
import { submitAll } from "./helpers/reports.js";

/**
 * An export walks the listing in chunks after a cursor. Each chunk's index scan must start at
 * the cursor, not at the newest report with everything before the cursor filtered out (which
 * made an export's time grow with the square of its length: 10 minutes for 500,000 reports).
 * The plan's own row counts show it; no timing.
 */
const COUNT = 1_500;
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp();
  const records = v2Records(COUNT / 3).flatMap((r) => [
    r,
    { ...r, baseCoinId: "uniswap" },
    { ...r, instrumentType: "perp" },
  ]);
  await submitAll(t, KEYS.acme, records);
});
afterAll(async () => t?.close());

type PlanNode = { "Rows Removed by Filter"?: number; Plans?: PlanNode[] };

function removedByFilter(node: PlanNode): number {
  const own = node["Rows Removed by Filter"] ?? 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + removedByFilter(child), 0);
}

describe("an export's next chunk", () => {
  it("reads from the cursor on, not every newer report again", async () => {
    const filter: ListFilter = { organizationId: "acme", baseCoinIds: ["chainlink", "uniswap"] };
    const { db, stores } = t.database;
    let cursor: ListCursor | undefined;
    for (let chunk = 0; chunk < 2; chunk++)
      cursor = (await stores.listing.after(filter, 600, cursor)).next;
    expect(cursor).toBeDefined();
    const removed = await db.transaction().execute(async (trx) => {
      // The plan a large table gets (an index walk in listing order), at this test's size.
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_bitmapscan = off`.execute(trx);
      const plan = await sql<{ "QUERY PLAN": [{ Plan: PlanNode }] }>`
        explain (analyze, format json) ${chunkAfter(filter, 100, cursor)}`.execute(trx);
      const root = plan.rows[0]?.["QUERY PLAN"][0]?.Plan;
      if (root === undefined) throw new Error("no plan");
      return removedByFilter(root);
    });
    // The 1,200 reports before the cursor are not read again.
    expect(removed).toBeLessThan(100);
  });
});
