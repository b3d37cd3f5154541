import { type RawBuilder, sql } from "kysely";
import { KPI_NAMES } from "../domain/obligation.js";
import {
  deadlineSql,
  FAILED_MASK,
  foundCte,
  kpiBit,
  MARKET_ORDER,
  periodsCte,
  REPORT_MATCHES_PERIOD,
  type ScorecardFilter,
} from "./scorecard-sql.js";

/** Per KPI i: due reported days where the period sets it and the report met / failed it. */
const KPI_SUMS = sql.raw(
  KPI_NAMES.map((_, i) => {
    const bit = kpiBit(i);
    return `coalesce(sum(n) filter (where kpi_mask & ${bit} <> 0 and failed_mask & ${bit} = 0), 0) as met_${i},
      coalesce(sum(n) filter (where failed_mask & ${bit} <> 0), 0) as missed_${i}`;
  }).join(",\n      "),
);

const COUNTED_COLUMNS = sql.raw(
  [
    "reported",
    "late",
    "eligible",
    "met",
    ...KPI_NAMES.flatMap((_, i) => [`met_${i}`, `missed_${i}`]),
  ]
    .map((c) => `coalesce(c.${c}, 0) as ${c}`)
    .join(", "),
);

/**
 * One row per obligation market of the range: days due, reported, late, eligible, met and
 * the per-KPI counts (CONTRACT section 4). Shaped for a year of 400 markets (146,400
 * market-days) in well under a second:
 * - days due are counted from the periods by date arithmetic (up to `lastDue`, the last day
 *   whose deadline has passed), not listed one by one;
 * - only the reports of due days are read (a range scan per organization and coin), each
 *   matched to its period and reduced to a few booleans and a mask of failed KPIs;
 * - they are grouped by market and outcome first (a single count per row), and the per-KPI
 *   counts are summed over those few groups.
 * The day-by-day query (scorecard-days-sql.ts) judges the same days one by one; the tests
 * hold both to the domain's rules.
 */
export function marketScorecards(f: ScorecardFilter, lastDue: string): RawBuilder<unknown> {
  const to = lastDue < f.dateLte ? lastDue : f.dateLte;
  return sql`with ${periodsCte(f)},
  ${foundCte(f.dateGte, to)},
  grouped as (
    select p.pm, r.created_at > ${deadlineSql("r.date", f.deadlineUtc)} as late,
      r.eligibility_status = 'eligible' as eligible, ${FAILED_MASK} as failed_mask, count(*) as n
    from found r join periods p on ${REPORT_MATCHES_PERIOD}
    group by 1, 2, 3, 4
  ),
  counted as (
    select ${MARKET_ORDER}, sum(n) as reported,
      coalesce(sum(n) filter (where late), 0) as late,
      coalesce(sum(n) filter (where eligible), 0) as eligible,
      coalesce(sum(n) filter (where failed_mask = 0), 0) as met,
      ${KPI_SUMS}
    from grouped join periods using (pm) group by ${MARKET_ORDER}
  ),
  due as (
    select ${MARKET_ORDER},
      sum(greatest(0, least(last_day, ${to}::date) - first_day + 1)) as due
    from periods group by ${MARKET_ORDER}
  )
  select d.organization_id, org.name as organization_name, d.base_coin_id, d.exchange_id,
    d.quote_key, d.instrument_type, d.due, ${COUNTED_COLUMNS}
  from due d join organizations org on org.id = d.organization_id
    left join counted c using (organization_id, base_coin_id, exchange_id, quote_key, instrument_type)
  order by ${MARKET_ORDER}`;
}

/** How many market-days the day-by-day query would list: days of the range in each period. */
export function marketDayCount(f: ScorecardFilter): RawBuilder<{ n: number }> {
  return sql<{ n: number }>`with ${periodsCte(f)}
    select coalesce(sum(last_day - first_day + 1), 0)::int as n from periods`;
}
