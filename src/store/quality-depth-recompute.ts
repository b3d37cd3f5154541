import { type Kysely, type RawBuilder, sql } from "kysely";
import { EXCEEDS_PUBLIC_DEPTH_BIT, type MarketDay } from "../domain/quality.js";
import { publicDepthBitJoin } from "./quality-sql.js";
import { withTransientRetry } from "./retry.js";
import type { Tables } from "./tables.js";

/**
 * The statements that recompute `exceeds_public_depth` from the stored public depth: over
 * every report by id range, or over the reports of given market-days, found through each
 * organization's key index.
 */
export function createDepthRecompute(db: Kysely<Tables>, publicDepthTolerance: number) {
  const recompute = recomputeStatement(publicDepthTolerance);
  /** Runs the statement (again after a deadlock with a submission, when `retry`). */
  const changedBy = async (statement: Statement, retry: boolean) => {
    const run = () => statement.execute(db);
    const r = await (retry ? withTransientRetry(run) : run());
    return r.rows[0]?.changed ?? 0;
  };
  return {
    /** The lowest and highest report id (undefined without reports). */
    async reportIdRange(): Promise<{ min: number; max: number } | undefined> {
      const r = await sql<{ min: string | null; max: string | null }>`
        select min(id)::text as min, max(id)::text as max from reports`.execute(db);
      const row = r.rows[0];
      if (row?.min == null || row.max == null) return undefined;
      return { min: Number(row.min), max: Number(row.max) };
    },

    /**
     * Recomputes the flag of the reports with ids in [fromId, toId) (of the given market-days
     * only, when given), writing only rows whose flags change, and notes them for the webhook
     * event producer (quality.flagged) in the same statement. One short statement per id
     * range: a batch locks only the rows it changes, for the time of one range.
     *
     * Over every report (no `days`) a range never waits for a row lock: it skips the rows a
     * writer holds (SKIP LOCKED), since waiting would hold the range's locks meanwhile. For the
     * days whose public depth just changed it waits instead (a deadlock with a submission is
     * retried): a skipped row keeps its old flag when its writer rolls back or writes no flags
     * (an eligibility recomputation), and nothing would recompute it again.
     */
    async recomputeRange(fromId: number, toId: number, days?: MarketDay[]): Promise<number> {
      const ofDays = days === undefined ? sql`` : sql`and ${onMarketDays(days)}`;
      // The update repeats the id range so that the planner reads only that range of reports,
      // by their primary key.
      const range = sql`r.id >= ${fromId} and r.id < ${toId}`;
      const statement = recompute(sql`${range} ${ofDays}`, range, days === undefined);
      return changedBy(statement, days !== undefined);
    },

    /**
     * The ids of the reports on the given market-days (whatever their quote), or undefined
     * when finding them would take more than `max` index probes (one per organization and
     * market-day) or they are more than `max` reports: the caller walks the table instead.
     */
    async reportIdsOfDays(days: MarketDay[], max: number): Promise<number[] | undefined> {
      const distinct = distinctMarketDays(days);
      const organizations = await sql<{ n: number }>`
        select count(*)::int as n from organizations`.execute(db);
      if ((organizations.rows[0]?.n ?? 0) * distinct.length > max) return undefined;
      // A report has one organization and one market-day: no id comes twice, so the scan
      // stops at the limit.
      const r = await sql<{ id: string }>`
        select r.id::text as id
        from organizations o
        cross join ${marketDayRows(distinct)}
        join reports r on r.organization_id = o.id and r.date = g.date
          and r.exchange_id = g.exchange_id and r.base_coin_id = g.base_coin_id
          and r.instrument_type = g.instrument_type
        limit ${Math.floor(max) + 1}`.execute(db);
      if (r.rows.length > max) return undefined;
      return r.rows.map((row) => Number(row.id)).sort((a, b) => a - b);
    },

    /** `recomputeRange` of the reports with these ids, waiting for rows a writer holds. */
    async recomputeReports(ids: number[]): Promise<number> {
      const these = sql`r.id = any(${ids.map(String)}::bigint[])`;
      return changedBy(recompute(these, these, false), true);
    },
  };
}

/**
 * The statement that sets the flag of the reports `where` selects (`again` narrows the update
 * to the same rows, so that the planner reads them by their primary key) where it changes.
 * Changes are noted only while an endpoint listens to quality.flagged: events nobody hears
 * are not worth a write per changed report.
 */
function recomputeStatement(publicDepthTolerance: number) {
  const bit = sql.raw(publicDepthBitJoin("r", String(publicDepthTolerance)));
  const kept = sql.raw(String(~EXCEEDS_PUBLIC_DEPTH_BIT & 0x7fff));
  return (where: RawBuilder<unknown>, again: RawBuilder<unknown>, skipLocked: boolean) => sql<{
    changed: number;
  }>`
    with target as (
      select r.id, (r.quality_flags & ${kept} | coalesce(x.bit, 0))::smallint as flags
      from reports r ${bit}
      where ${where}
        and r.quality_flags <> (r.quality_flags & ${kept} | coalesce(x.bit, 0))
      for update of r ${skipLocked ? sql`skip locked` : sql``}
    ),
    changed as (
      update reports r set quality_flags = t.flags from target t
      where r.id = t.id and ${again}
      returning r.id
    ),
    noted as (
      insert into webhook_quality_changes (report_id) select id from changed
      where exists (select 1 from webhooks w
        where not w.disabled and w.events && array['quality.flagged', '*']::text[])
    )
    select count(*)::int as changed from changed`;
}

type Statement = ReturnType<ReturnType<typeof recomputeStatement>>;

/** The market-days once each, whatever their quote. */
function distinctMarketDays(days: MarketDay[]): MarketDay[] {
  const key = (d: MarketDay) => `${d.exchangeId}\n${d.baseCoinId}\n${d.instrumentType}\n${d.date}`;
  return [...new Map(days.map((d) => [key(d), d])).values()];
}

/** `g(exchange_id, base_coin_id, instrument_type, date)`: one row a market-day. */
function marketDayRows(days: MarketDay[]) {
  const col = <T>(f: (d: MarketDay) => T) => days.map(f);
  return sql`unnest(${col((d) => d.exchangeId)}::text[], ${col((d) => d.baseCoinId)}::text[],
    ${col((d) => d.instrumentType)}::text[], ${col((d) => d.date)}::date[])
    as g(exchange_id, base_coin_id, instrument_type, date)`;
}

/** The report `r` is on one of the market-days. */
const onMarketDays = (days: MarketDay[]) =>
  sql`(r.exchange_id, r.base_coin_id, r.instrument_type, r.date) in (
    select * from ${marketDayRows(days)})`;
