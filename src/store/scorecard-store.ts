import { type Kysely, sql } from "kysely";
import { compliance, type DayStatus, KPI_NAMES, type KpiName } from "../domain/obligation.js";
import type { EligibilityStatus, InstrumentType } from "../domain/report.js";
import { lastDueDay } from "../domain/scorecard.js";
import { type DepthShares, depthSharesOf } from "./quality-scorecard.js";
import { marketScorecards, periodSummary } from "./scorecard-aggregate-sql.js";
import { scoredDays } from "./scorecard-days-sql.js";
import { mediansOf, type ScorecardMedians, scorecardMedians } from "./scorecard-medians-sql.js";
import { MARKET_ORDER, owingOrganizations, type ScorecardFilter } from "./scorecard-sql.js";
import type { Tables } from "./tables.js";

export type { ScorecardFilter, ScorecardMedians };

/** An obligation market, with its organization's name. */
export type ScoredMarket = {
  organizationId: string;
  organizationName: string;
  baseCoinId: string;
  exchangeId: string;
  quote: string;
  instrumentType: InstrumentType;
};

export type KpiCounts = { daysMet: number; daysMissed: number };

/** One obligation market's scorecard over the range (pending days are counted nowhere). */
export type MarketScorecard = ScoredMarket & {
  daysDue: number;
  daysReported: number;
  daysMissing: number;
  daysLate: number;
  daysEligible: number;
  daysMet: number;
  compliance: number | null;
  kpis: Partial<Record<KpiName, KpiCounts>>;
  daysFlagged: number;
  medianDepthShare200: DepthShares;
};

/** One obligation market on one day. */
export type DayScorecard = { date: string } & ScoredMarket & {
    status: DayStatus;
    late: boolean;
    failedKpis: KpiName[];
    eligibilityStatus: EligibilityStatus | null;
  };

type MarketRow = {
  organization_id: string;
  organization_name: string;
  base_coin_id: string;
  exchange_id: string;
  quote_key: string;
  instrument_type: InstrumentType;
};

type AggregateRow = MarketRow & {
  due: number;
  reported: number;
  late: number;
  eligible: number;
  met: number;
  flagged: number;
  bid_share: number | null;
  ask_share: number | null;
} & Record<`${"met" | "missed"}_${number}`, number>;

type DayRow = MarketRow & {
  date: string;
  status: DayStatus;
  late: boolean;
  failed_kpis: KpiName[];
  eligibility_status: EligibilityStatus | null;
};

const marketOf = (r: MarketRow): ScoredMarket => ({
  organizationId: r.organization_id,
  organizationName: r.organization_name,
  baseCoinId: r.base_coin_id,
  exchangeId: r.exchange_id,
  quote: r.quote_key,
  instrumentType: r.instrument_type,
});

function kpisOf(row: AggregateRow): Partial<Record<KpiName, KpiCounts>> {
  const kpis: Partial<Record<KpiName, KpiCounts>> = {};
  KPI_NAMES.forEach((kpi, i) => {
    const daysMet = Number(row[`met_${i}`] ?? 0);
    const daysMissed = Number(row[`missed_${i}`] ?? 0);
    if (daysMet + daysMissed > 0) kpis[kpi] = { daysMet, daysMissed };
  });
  return kpis;
}

/**
 * Runs a scoring query in a transaction of its own, with settings for it alone:
 * - JIT compilation off: the generated days make the planner's cost estimate large enough
 *   to trigger it, and compiling the KPI expressions cost 13 s for a query that runs in a
 *   fraction of a second;
 * - work_mem 64 MB, so that a year of reports is hashed in memory;
 * - for the aggregate, sorting and nested loops discouraged: the planner cannot estimate how
 *   many reports the range scans return (it guesses one) and would sort a year of them to
 *   group them, which hashing does in two thirds of the time (measured on 146,400 reports),
 *   or look up each one's public depth in a loop over the market-days (146,400 x 7,320).
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
  // Repeatable read: the KPI mask and the counts come from one snapshot.
  return db.isTransaction
    ? run(db)
    : db.transaction().setIsolationLevel("repeatable read").execute(run);
}

/** Below this many market-days a scope runs whole: the extra round trips cost more. */
const SPLIT_ABOVE_MARKET_DAYS = 20_000;

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
  return {
    /**
     * One row per obligation market, ordered by organization, coin, exchange, quote, type.
     * With parallelism above 1 (a pool), the organizations in scope are split into that many
     * runs of consecutive ids, each scored on a connection of its own at the same time: a
     * project's year of 20 market makers is 146,400 reports to judge, and one backend does that
     * on one core. Scopes of fewer market-days than SPLIT_ABOVE_MARKET_DAYS run whole. Each share's rows come back in order, and the shares follow the order too.
     */
    async markets(filter: ScorecardFilter): Promise<MarketScorecard[]> {
      if (isEmpty(filter)) return [];
      const splittable = parallelism > 1 && filter.organizationIds === undefined;
      const lastDue = lastDueDay(filter.now, filter.deadlineUtc);
      // The period summary decides both the KPIs judged and whether to split: read once.
      const result = await scoring(db, { hashAggregate: true }, async (trx) => {
        const summary = (await periodSummary(filter).execute(trx)).rows[0];
        if (splittable && (summary?.n ?? 0) > splitAbove) return undefined;
        return marketScorecards(filter, lastDue, summary?.kpi_mask ?? 0).execute(trx);
      });
      if (result === undefined) {
        const owing = await owingOrganizations(filter).execute(db);
        const shares = consecutiveShares(
          owing.rows.map((r) => r.organization_id),
          parallelism,
        );
        const parts = await Promise.all(
          shares.map((organizationIds) => this.markets({ ...filter, organizationIds })),
        );
        return parts.flat();
      }
      return (result.rows as AggregateRow[]).map((row) => ({
        ...marketOf(row),
        daysDue: Number(row.due),
        daysReported: Number(row.reported),
        daysMissing: Number(row.due) - Number(row.reported),
        daysLate: Number(row.late),
        daysEligible: Number(row.eligible),
        daysMet: Number(row.met),
        compliance: compliance(Number(row.met), Number(row.due)),
        kpis: kpisOf(row),
        daysFlagged: Number(row.flagged),
        medianDepthShare200: depthSharesOf(row.bid_share, row.ask_share),
      }));
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

    /** Medians of the judged reports, per organization and coin (and per obligation market). */
    async medians(filter: ScorecardFilter, perMarket: boolean): Promise<ScorecardMedians[]> {
      if (isEmpty(filter)) return [];
      const lastDue = lastDueDay(filter.now, filter.deadlineUtc);
      const result = await scoring(db, { hashAggregate: false }, (trx) =>
        scorecardMedians(filter, lastDue, perMarket).execute(trx),
      );
      return result.rows.map(mediansOf);
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
