import { type RawBuilder, sql } from "kysely";
import type { InstrumentType } from "../domain/report.js";
import {
  foundCte,
  periodsCte,
  REPORT_MATCHES_PERIOD,
  type ScorecardFilter,
} from "./scorecard-sql.js";

type MedianRow = {
  organization_id: string;
  base_coin_id: string;
  /** Null on the row of a whole organization and coin (its markets together). */
  exchange_id: string | null;
  quote_key: string | null;
  instrument_type: string | null;
  reports: number;
  bid_depth_200: number | null;
  ask_depth_200: number | null;
  bid_ask_spread: number | null;
};

/**
 * The medians a project compares market makers by (issue 14): bid and ask depth at 200 bps and
 * the spread, over the reports that answer an obligation market on a due day of the range
 * (the reports its scorecard judges), per organization and coin, and with `perMarket` per
 * obligation market too.
 * The same periods and reports as the scorecards (one range scan per organization and coin);
 * a report answers one period at most, as periods of a coin never overlap.
 */
export function scorecardMedians(
  f: ScorecardFilter,
  lastDue: string,
  perMarket: boolean,
): RawBuilder<MedianRow> {
  const to = lastDue < f.dateLte ? lastDue : f.dateLte;
  const median = (column: string) =>
    sql.raw(`percentile_cont(0.5) within group (order by r.${column}) as ${column}`);
  // Each median sorts its values: per market only when asked (one market maker's markets).
  const market = perMarket
    ? sql`r.exchange_id, r.quote_key, r.instrument_type`
    : sql`null::text as exchange_id, null::text as quote_key, null::text as instrument_type`;
  const groups = perMarket
    ? sql`grouping sets ((r.organization_id, r.base_coin_id),
      (r.organization_id, r.base_coin_id, r.exchange_id, r.quote_key, r.instrument_type))`
    : sql`r.organization_id, r.base_coin_id`;
  return sql<MedianRow>`with ${periodsCte(f)},
  ${foundCte(f.dateGte, to)}
  select r.organization_id, r.base_coin_id, ${market},
    count(*)::int as reports, ${median("bid_depth_200")}, ${median("ask_depth_200")},
    ${median("bid_ask_spread")}
  from found r
  where exists (select 1 from periods p where ${REPORT_MATCHES_PERIOD})
  group by ${groups}
  order by 1, 2, 3 nulls first, 4, 5`;
}

/**
 * Medians over the reports a scorecard judges: of one obligation market, or (`market` null)
 * of all the markets an organization owes for a coin.
 */
export type ScorecardMedians = {
  organizationId: string;
  baseCoinId: string;
  market: { exchangeId: string; quote: string; instrumentType: InstrumentType } | null;
  reports: number;
  bidDepth200: number | null;
  askDepth200: number | null;
  bidAskSpread: number | null;
};

export const mediansOf = (row: MedianRow): ScorecardMedians => ({
  organizationId: row.organization_id,
  baseCoinId: row.base_coin_id,
  market:
    row.exchange_id === null
      ? null
      : {
          exchangeId: row.exchange_id,
          quote: row.quote_key ?? "",
          instrumentType: row.instrument_type as InstrumentType,
        },
  reports: Number(row.reports),
  bidDepth200: row.bid_depth_200,
  askDepth200: row.ask_depth_200,
  bidAskSpread: row.bid_ask_spread,
});
