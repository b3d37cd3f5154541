import { compliance, KPI_NAMES, type KpiName } from "../domain/obligation.js";
import type { InstrumentType } from "../domain/report.js";
import { type DepthShares, depthSharesOf } from "./quality-scorecard.js";

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

/** One obligation market's counts over the range (pending days are counted nowhere). */
export type ScorecardCounts = ScoredMarket & {
  daysDue: number;
  daysReported: number;
  daysMissing: number;
  daysLate: number;
  daysEligible: number;
  daysMet: number;
  compliance: number | null;
  kpis: Partial<Record<KpiName, KpiCounts>>;
  daysFlagged: number;
};

/** One obligation market's scorecard: its counts and its median depth shares. */
export type MarketScorecard = ScorecardCounts & { medianDepthShare200: DepthShares };

export type MarketRow = {
  organization_id: string;
  organization_name: string;
  base_coin_id: string;
  exchange_id: string;
  quote_key: string;
  instrument_type: InstrumentType;
};

type Median = number | null;

/**
 * Medians over the reports a scorecard judges: of one obligation market, or (`market` null)
 * of all the markets an organization owes for a coin.
 */
export type ScorecardMedians = {
  organizationId: string;
  baseCoinId: string;
  market: { exchangeId: string; quote: string; instrumentType: InstrumentType } | null;
  reports: number;
  bidDepth200: Median;
  askDepth200: Median;
  bidAskSpread: Median;
};

/** A row of `marketScorecards`; the medians' columns only when it was asked for them. */
export type AggregateRow = MarketRow & {
  due: number;
  reported: number;
  late: number;
  eligible: number;
  met: number;
  flagged: number;
  bid_share?: number | null;
  ask_share?: number | null;
  /** The KPIs the periods the row was read with set (the query judged those of its mask). */
  scope_kpi_mask: number;
  market_reports?: number | null;
  organization_reports?: number | null;
} & Record<`${"met" | "missed"}_${number}`, number> &
  Partial<
    Record<
      `${"market" | "organization"}_${"bid_depth_200" | "ask_depth_200" | "bid_ask_spread"}`,
      Median
    >
  >;

export const marketOf = (r: MarketRow): ScoredMarket => ({
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

export const countsOf = (row: AggregateRow): ScorecardCounts => ({
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
});

/** A row read with its shares (`parts.shares`) as a scorecard. */
export const scorecardOf = (row: AggregateRow): MarketScorecard => ({
  ...countsOf(row),
  medianDepthShare200: depthSharesOf(row.bid_share ?? null, row.ask_share ?? null),
});

/**
 * The medians of the rows' judged reports (rows in MARKET_ORDER, read with medians): one per
 * organization and coin with a report, followed by one per market with a report when
 * `perMarket`, as the medians query ordered them.
 */
export function mediansOfRows(rows: AggregateRow[], perMarket: boolean): ScorecardMedians[] {
  const out: ScorecardMedians[] = [];
  const median = (row: AggregateRow, market: ScorecardMedians["market"]) => {
    const of = market === null ? "organization" : "market";
    return {
      organizationId: row.organization_id,
      baseCoinId: row.base_coin_id,
      market,
      reports: Number(row[`${of}_reports`]),
      bidDepth200: row[`${of}_bid_depth_200`] ?? null,
      askDepth200: row[`${of}_ask_depth_200`] ?? null,
      bidAskSpread: row[`${of}_bid_ask_spread`] ?? null,
    };
  };
  let last: AggregateRow | undefined;
  for (const row of rows) {
    const sameOrganizationCoin =
      last?.organization_id === row.organization_id && last.base_coin_id === row.base_coin_id;
    if (!sameOrganizationCoin && row.organization_reports != null) out.push(median(row, null));
    last = row;
    if (perMarket && row.market_reports != null)
      out.push(
        median(row, {
          exchangeId: row.exchange_id,
          quote: row.quote_key,
          instrumentType: row.instrument_type,
        }),
      );
  }
  return out;
}
