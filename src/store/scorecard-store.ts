import { type Kysely, sql } from "kysely";
import type { DayStatus, KpiName } from "../domain/obligation.js";
import type { EligibilityStatus } from "../domain/report.js";
import { lastDueDay } from "../domain/scorecard.js";
import { type AggregateParts, marketScorecards, periodSummary } from "./scorecard-aggregate-sql.js";
import { scoredDays } from "./scorecard-days-sql.js";
import {
  type AggregateRow,
  countsOf,
  type MarketRow,
  type MarketScorecard,
  marketOf,
  mediansOfRows,
  type ScorecardCounts,
  type ScorecardMedians,
  type ScoredMarket,
  scorecardOf,
} from "./scorecard-rows.js";
import { MARKET_ORDER, type ScorecardFilter } from "./scorecard-sql.js";
import type { Tables } from "./tables.js";

export type {
  MarketScorecard,
  ScorecardCounts,
  ScorecardMedians,
  ScoredMarket,
} from "./scorecard-rows.js";
export type { ScorecardFilter };

/** One obligation market on one day. */
export type DayScorecard = { date: string } & ScoredMarket & {
    status: DayStatus;
    late: boolean;
    failedKpis: KpiName[];
    eligibilityStatus: EligibilityStatus | null;
  };

type DayRow = MarketRow & {
  date: string;
  status: DayStatus;
  late: boolean;
  failed_kpis: KpiName[];
  eligibility_status: EligibilityStatus | null;
};

/**
 * Runs a scoring query in a transaction of its own, with settings for it alone:
 * - JIT compilation off: the generated days make the planner's cost estimate large enough
 *   to trigger it, and compiling the KPI expressions cost 13 s for a query that runs in a
 *   fraction of a second;
 * - work_mem 64 MB, so that a year of reports is hashed in memory;
 * - for the aggregate, sorting and nested loops discouraged: the planner cannot estimate how
 *   many reports the range scans return (it guesses one) and would sort a year of them to
 *   group them by their five text columns before judging them, or look up each one's public
 *   depth in a loop over the market-days (146,400 x 7,320); each organization and coin's judged
 *   rows are still sorted by market number for the medians (ordered-set aggregates cannot be
 *   hashed).
 */
function scoring<T>(
  db: Kysely<Tables>,
  options: { hashAggregate: boolean },
  work: (trx: Kysely<Tables>) => Promise<T>,
): Promise<T> {
  const run = async (trx: Kysely<Tables>) => {
    await sql`select set_config('jit', 'off', true), set_config('work_mem', '64MB', true),
      set_config('enable_sort', ${options.hashAggregate ? "off" : "on"}, true),
      set_config('enable_nestloop', ${options.hashAggregate ? "off" : "on"}, true)`.execute(trx);
    return work(trx);
  };
  // The work is one statement: one snapshot (judgedWith checks its KPI mask against it).
  return db.isTransaction ? run(db) : db.transaction().execute(run);
}

/**
 * `marketScorecards` judging the KPIs of `kpiMask`, read again with the KPIs its own periods
 * set when they are more (an obligation changed after the summary was read), so that the
 * counts always come from the periods of the snapshot they were judged in.
 */
export async function judgedWith(
  db: Kysely<Tables>,
  filter: ScorecardFilter,
  parts: AggregateParts,
  kpiMask: number,
): Promise<AggregateRow[]> {
  const lastDue = lastDueDay(filter.now, filter.deadlineUtc);
  const result = await scoring(db, { hashAggregate: true }, (trx) =>
    marketScorecards(filter, lastDue, kpiMask, parts).execute(trx),
  );
  const rows = result.rows as AggregateRow[];
  const unjudged = (rows[0]?.scope_kpi_mask ?? 0) & ~kpiMask;
  return unjudged === 0 ? rows : judgedWith(db, filter, parts, kpiMask | unjudged);
}

/**
 * Below this many market-days a scope runs whole: the extra round trips cost more. A project's
 * default 30 days of 20 market makers (12,000) split in two: 31 -> 24 ms at the median, same
 * 1 M database (a split of 4,000 gained nothing more).
 */
const SPLIT_ABOVE_MARKET_DAYS = 8_000;

const isEmpty = (f: ScorecardFilter) =>
  f.scope.kind === "coins" && f.scope.baseCoinIds.length === 0;

/**
 * Scorecards computed in the database (CONTRACT section 4): see `scoredDays` for how each day
 * is judged. Only the aggregate rows (one per obligation market) or the day rows leave it.
 */
export function createScorecardStore(
  db: Kysely<Tables>,
  options: { parallelism?: number; splitAboveMarketDays?: number } = {},
) {
  const splitAbove = options.splitAboveMarketDays ?? SPLIT_ABOVE_MARKET_DAYS;
  const parallelism = db.isTransaction ? 1 : (options.parallelism ?? 1);
  /**
   * The rows of `marketScorecards`, in order. With parallelism above 1 (a pool), the
   * organizations in scope are split into that many runs of consecutive ids, each scored on a
   * connection of its own at the same time: a project's year of 20 market makers is 146,400
   * reports to judge, and one backend does that on one core. Scopes of fewer market-days than
   * SPLIT_ABOVE_MARKET_DAYS run whole. Each share's rows come back in order, and the shares
   * follow the order too. One summary of the periods decides the split and the KPIs judged.
   */
  const scoredRows = async (
    filter: ScorecardFilter,
    parts: AggregateParts,
  ): Promise<AggregateRow[]> => {
    if (isEmpty(filter)) return [];
    const summary = (await periodSummary(filter).execute(db)).rows[0];
    if (summary === undefined) return [];
    const filters =
      parallelism > 1 && summary.n > splitAbove
        ? consecutiveShares(summary.organizations, parallelism).map((organizationIds) => ({
            ...filter,
            organizationIds,
          }))
        : [filter];
    const scored = await Promise.all(
      filters.map((f) => judgedWith(db, f, parts, summary.kpi_mask)),
    );
    return scored.flat();
  };
  return {
    /**
     * One row per obligation market, ordered by organization, coin, exchange, quote, type;
     * large scopes split over `parallelism` connections (see `scoredRows`).
     */
    async markets(filter: ScorecardFilter): Promise<MarketScorecard[]> {
      return (await scoredRows(filter, { medians: false, shares: true })).map(scorecardOf);
    },

    /**
     * The counts of `markets` and the medians of the same reports (see `mediansOfRows`), from
     * one read of them: the dashboard's coin and market maker pages show both, and not the
     * depth shares, whose public depth join was a quarter of the time.
     */
    async marketsWithMedians(
      filter: ScorecardFilter,
      perMarket: boolean,
    ): Promise<{ markets: ScorecardCounts[]; medians: ScorecardMedians[] }> {
      const rows = await scoredRows(filter, { medians: true, shares: false });
      return { markets: rows.map(countsOf), medians: mediansOfRows(rows, perMarket) };
    },

    /** One row per obligation market and day (pending days included), then by date. */
    async days(filter: ScorecardFilter): Promise<DayScorecard[]> {
      if (isEmpty(filter)) return [];
      const result = await scoring(db, { hashAggregate: false }, (trx) =>
        sql<DayRow>`
        with ${scoredDays(filter)}
        select s.organization_id, org.name as organization_name, s.base_coin_id, s.exchange_id,
          s.quote_key, s.instrument_type, to_char(s.date, 'YYYY-MM-DD') as date, s.status,
          s.late, s.failed_kpis, s.eligibility_status
        from scored s join organizations org on org.id = s.organization_id
        order by ${MARKET_ORDER}, date`.execute(trx),
      );
      return result.rows.map((row) => ({
        date: row.date,
        ...marketOf(row),
        status: row.status,
        late: row.late,
        failedKpis: row.failed_kpis,
        eligibilityStatus: row.eligibility_status,
      }));
    },

    /** How many market-days `days` would return: obligation markets times their days in range. */
    async countDays(filter: ScorecardFilter): Promise<number> {
      if (isEmpty(filter)) return 0;
      const result = await periodSummary(filter).execute(db);
      return result.rows[0]?.n ?? 0;
    },
  };
}

export type ScorecardStore = ReturnType<typeof createScorecardStore>;

/** `items` cut into at most `n` runs of consecutive items, as even as can be. */
function consecutiveShares<T>(items: T[], n: number): T[][] {
  const count = Math.min(n, items.length);
  const shares: T[][] = [];
  for (let i = 0; i < count; i++) {
    shares.push(
      items.slice(
        Math.floor((i * items.length) / count),
        Math.floor(((i + 1) * items.length) / count),
      ),
    );
  }
  return shares;
}
