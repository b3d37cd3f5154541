import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tables } from "../src/store/tables.js";
import { versionsToJudge } from "../src/store/webhook-version-feed.js";
import { freshDatabase, onPostgres, type TestDatabase } from "./helpers/database.js";
import { testProducer } from "./helpers/webhook-jobs.js";

/**
 * A producer pass reads the versions stored since the last one, and for each its report and
 * its kept quality outcome, by key: its work follows the new versions, not the size of the
 * tables. Counted in blocks fetched (the database's own counters), not in time: a plan that
 * scans `reports` or `report_versions` whole fetches every block of them.
 */
let t: TestDatabase;
let stored = 0;

beforeAll(async () => {
  t = await freshDatabase();
});
afterAll(async () => {
  await t?.close();
});

/** `count` new reports of one market maker, each with its first version, as ingest stores them. */
async function storeReports(count: number): Promise<void> {
  await sql`
    with stored as (
      insert into reports (organization_id, date, exchange_id, base_coin_id, quote_key,
        instrument_type, schema_version, bid_depth_50, bid_depth_100, bid_depth_200, ask_depth_50,
        ask_depth_100, ask_depth_200, bid_ask_depth_50, bid_ask_depth_100, bid_ask_depth_200,
        bid_ask_spread, order_fill_volume_maker, order_fill_volume_taker, eligibility_status)
      select 'acme', date '2024-01-01' + (i / 400), 'exchange-' || (i / 20 % 20),
        'coin-' || (i % 20), 'tether', 'spot', 2, 1, 2, 3, 1, 2, 3, 2, 4, 6, 0.1, 10, 10, 'eligible'
      from generate_series(${stored}::int, ${stored + count - 1}::int) as i
      returning *
    )
    insert into report_versions (report_id, submission_id, schema_version, bid_depth_50,
      bid_depth_100, bid_depth_200, ask_depth_50, ask_depth_100, ask_depth_200, bid_ask_depth_50,
      bid_ask_depth_100, bid_ask_depth_200, bid_ask_spread, order_fill_volume_maker,
      order_fill_volume_taker)
    select id, gen_random_uuid(), schema_version, bid_depth_50, bid_depth_100, bid_depth_200,
      ask_depth_50, ask_depth_100, ask_depth_200, bid_ask_depth_50, bid_ask_depth_100,
      bid_ask_depth_200, bid_ask_spread, order_fill_volume_maker, order_fill_volume_taker
    from stored order by id`.execute(t.db);
  stored += count;
}

const PASS_TABLES = ["reports", "report_versions", "webhook_quality_outcomes"];

/** Blocks fetched so far in this session from the pass's tables and their indexes. */
async function blocksFetched(db: Kysely<Tables>): Promise<number> {
  const r = await sql<{ n: string }>`
    select coalesce(sum(pg_stat_get_xact_blocks_fetched(c.oid)), 0)::text as n
    from pg_class c
    where c.relname = any(${PASS_TABLES}::text[])
      or c.oid in (select indexrelid from pg_index
        where indrelid in (select oid from pg_class where relname = any(${PASS_TABLES}::text[])))`.execute(
    db,
  );
  return Number(r.rows[0]?.n ?? 0);
}

/**
 * The blocks the next pass's read of the versions fetches, with `holes` noted ids still
 * awaited (in a transaction rolled back, so the next pass reads the same).
 */
async function blocksANextPassFetches(holes: number): Promise<number> {
  const rolledBack = new Error("rolled back");
  let fetched = 0;
  await t.db
    .transaction()
    .execute(async (trx) => {
      // Ids no version has, from writers that have not ended: each is looked for again.
      await sql`insert into webhook_version_holes (id, noted_xmax)
        select -g, 9223372036854775807 from generate_series(1, ${holes}::int) g`.execute(trx);
      const before = await blocksFetched(trx);
      const read = await versionsToJudge(trx, 5_000);
      expect(read.freshCount).toBeGreaterThan(0);
      fetched = (await blocksFetched(trx)) - before;
      throw rolledBack;
    })
    .catch((error: unknown) => {
      if (error !== rolledBack) throw error;
    });
  return fetched;
}

/** Every version stored so far judged: the cursor past them. */
async function catchUp(): Promise<void> {
  await testProducer(t.stores, () => new Date("2026-03-03T08:00:00Z")).runOnce();
}

describe("a producer pass over the versions stored since the last", () => {
  it("fetches about as many blocks with 30,000 reports stored as with 200, statistics stale", async () => {
    await catchUp(); // the first pass ever: it sets the cursor
    await storeReports(200);
    await catchUp();
    // The planner's statistics stay those of 200 reports, as after a bulk load that no
    // autovacuum has followed yet (PGlite has none at all).
    await sql`analyze reports, report_versions`.execute(t.db);
    if (onPostgres) {
      await sql`alter table reports set (autovacuum_enabled = false)`.execute(t.db);
      await sql`alter table report_versions set (autovacuum_enabled = false)`.execute(t.db);
    }
    await storeReports(50);
    const small = await blocksANextPassFetches(20);
    await catchUp();

    await storeReports(30_000);
    await catchUp();
    await storeReports(50);
    const large = await blocksANextPassFetches(20);

    // A scan of either table fetches over a thousand blocks at this size.
    expect(small).toBeGreaterThan(0);
    expect(large).toBeLessThan(2 * small + 100);
  });
});
