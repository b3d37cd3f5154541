import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Tables } from "./tables.js";

/**
 * The listing's month counts: how many reports each organization has per base coin and month.
 * A stored batch writes one delta row (migration 022) instead of updating a count row per
 * coin and month it covers; `compact` folds delta rows into report_month_counts, and a count
 * sums both. Reports are never deleted, so counts only grow.
 */

/**
 * The batch upsert's CTE that writes its delta: its new reports (`upserted` rows with
 * `created`) counted per coin and month. No row when the batch created no report. $1 is the
 * organization.
 */
export const monthCountDeltaSql = `
  counted as (
    insert into report_month_count_deltas (organization_id, base_coin_ids, months, ns)
    select $1::text, array_agg(base_coin_id), array_agg(month), array_agg(n)
    from (
      select base_coin_id, date_trunc('month', date)::date as month, count(*)::int as n
      from upserted where created group by 1, 2
    ) by_month
    having count(*) > 0
  ),`;

/** Which counts a listing sums: one organization's, for some coins, in a range of months. */
export type MonthCountFilter = {
  organizationId: string;
  baseCoinIds: string[];
  firstMonth?: string;
  lastMonth?: string;
};

/** The sum of the counts `f` selects, folded and not yet folded, as one scalar subquery. */
export function monthCountSql(f: MonthCountFilter): RawBuilder<unknown> {
  const within = (coin: RawBuilder<unknown>, month: RawBuilder<unknown>) => {
    const conditions = [sql`${coin} = any(${f.baseCoinIds}::text[])`];
    if (f.firstMonth !== undefined) conditions.push(sql`${month} >= ${f.firstMonth}::date`);
    if (f.lastMonth !== undefined) conditions.push(sql`${month} <= ${f.lastMonth}::date`);
    return sql.join(conditions, sql` and `);
  };
  return sql`(
    (select coalesce(sum(n), 0) from report_month_counts
      where organization_id = ${f.organizationId}
        and ${within(sql.ref("base_coin_id"), sql.ref("month"))})
    + (select coalesce(sum(d.n), 0)
      from report_month_count_deltas x
        cross join lateral unnest(x.base_coin_ids, x.months, x.ns) as d(base_coin_id, month, n)
      where x.organization_id = ${f.organizationId}
        and ${within(sql.ref("d.base_coin_id"), sql.ref("d.month"))}))`;
}

/** How many delta rows one compaction statement folds at most. */
const COMPACTION_BATCH = 1000;

export function createMonthCountStore(db: Kysely<Tables>) {
  return {
    /** How many delta rows wait to be folded in. */
    async pending(): Promise<number> {
      const r = await sql<{ n: number }>`
        select count(*)::int as n from report_month_count_deltas`.execute(db);
      return r.rows[0]?.n ?? 0;
    },

    /**
     * Folds every delta row into report_month_counts and returns how many it folded. Each
     * statement deletes the rows it adds, so a reader's snapshot sees each delta once: in the
     * deltas or in the counts. Rows another compaction holds are skipped, not waited for, and
     * the counts are written in key order, so concurrent compactions neither count a delta
     * twice nor deadlock.
     */
    async compact(): Promise<number> {
      let folded = 0;
      for (;;) {
        const r = await sql<{ n: number }>`
          with taken as (
            delete from report_month_count_deltas where id in (
              select id from report_month_count_deltas order by id
              limit ${COMPACTION_BATCH} for update skip locked)
            returning organization_id, base_coin_ids, months, ns
          ),
          summed as (
            select t.organization_id, d.base_coin_id, d.month, sum(d.n) as n
            from taken t
              cross join lateral unnest(t.base_coin_ids, t.months, t.ns) as d(base_coin_id, month, n)
            group by 1, 2, 3
          ),
          added as (
            insert into report_month_counts as c (organization_id, base_coin_id, month, shard, n)
            select organization_id, base_coin_id, month, 0, n from summed order by 1, 2, 3
            on conflict (organization_id, base_coin_id, month, shard) do update set n = c.n + excluded.n
          )
          select count(*)::int as n from taken`.execute(db);
        const n = r.rows[0]?.n ?? 0;
        folded += n;
        if (n < COMPACTION_BATCH) return folded;
      }
    },
  };
}

export type MonthCountStore = ReturnType<typeof createMonthCountStore>;
