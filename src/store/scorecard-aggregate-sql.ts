import { type RawBuilder, sql } from "kysely";
import { KPI_NAMES, type KpiName } from "../domain/obligation.js";
import {
  deadlineSql,
  foundCte,
  kpiBit,
  kpiFailed,
  MARKET_ORDER,
  periodsCte,
  REPORT_MATCHES_PERIOD,
  type ScorecardFilter,
} from "./scorecard-sql.js";

/** The KPIs a mask (see kpiBit) stands for, with their index in KPI_NAMES. */
export function kpisOfMask(mask: number): { kpi: KpiName; i: number }[] {
  return KPI_NAMES.map((kpi, i) => ({ kpi, i })).filter(({ i }) => (mask & kpiBit(i)) !== 0);
}

/**
 * A report's reported ±2 % depth ÷ public depth on one side (bid against the cost to move the
 * price 2 % down, ask against 2 % up), of the period market's reports with a public depth on
 * their day, as an array: the medians are taken per obligation market in `depth_shares`. A
 * public depth of 0 gives no share.
 */
const shares = (reported: string, side: string) =>
  `array_agg(r.${reported} / d.${side}) filter (where d.${side} > 0)`;

/**
 * Per obligation market of a period (`pm`): its due reports counted by outcome, and their
 * depth shares (see `shares`).
 */
function countsByPeriodMarket(f: ScorecardFilter, kpis: { kpi: KpiName; i: number }[]) {
  const failed = kpis.map(({ kpi }) => kpiFailed(kpi));
  const anyFailed = failed.length === 0 ? "false" : failed.join(" or ");
  const missed = kpis.map(({ i }, k) => `count(*) filter (where ${failed[k]}) as missed_${i}`);
  return sql`by_pm as (
    select p.pm, count(*) as reported,
      count(*) filter (where r.created_at > ${deadlineSql("r.date", f)}) as late,
      count(*) filter (where r.eligibility_status = 'eligible') as eligible,
      count(*) filter (where r.quality_flags <> 0) as flagged,
      count(*) filter (where not (${sql.raw(anyFailed)})) as met
      ${sql.raw(missed.map((m) => `, ${m}`).join(""))},
      ${sql.raw(shares("bid_depth_200", "cost_to_move_down_usd"))} as bid_shares,
      ${sql.raw(shares("ask_depth_200", "cost_to_move_up_usd"))} as ask_shares
    from found r join periods p on ${REPORT_MATCHES_PERIOD}
    left join public_depth d on d.exchange_id = r.exchange_id and d.base_coin_id = r.base_coin_id
      and d.quote_key = r.quote_key and d.instrument_type = r.instrument_type
      and d.day = r.date and d.by_coin = (r.quote_coin_id is not null)
    group by p.pm
  )`;
}

const P_MARKET = "p.organization_id, p.base_coin_id, p.exchange_id, p.quote_key, p.instrument_type";

/**
 * `public_depth`: the public depth of each obligation market in scope on each day of its
 * periods, keyed as a report finds it (as `publicDepthOf` in quality-sql.ts does): the
 * `by_coin` rows by quote coin id, for reports that name one (that coin's first quote symbol),
 * the others by quote symbol. Two index range scans per market, hash-joined to the reports by
 * market and day in `by_pm`: one index probe per report doubled the scorecard's time.
 */
function publicDepthCte() {
  const sameMarket = `d.exchange_id = m.exchange_id and d.base_coin_id = m.base_coin_id
      and d.instrument_type = m.instrument_type and d.day between m.first_day and m.last_day`;
  return sql`markets as (
    select exchange_id, base_coin_id, quote_key, instrument_type,
      min(first_day) as first_day, max(last_day) as last_day
    from periods group by exchange_id, base_coin_id, quote_key, instrument_type
  ),
  public_depth as materialized (
    select m.exchange_id, m.base_coin_id, m.quote_key, m.instrument_type, d.*
    from markets m cross join lateral (
      (select distinct on (d.day) d.day, true as by_coin, d.cost_to_move_up_usd,
        d.cost_to_move_down_usd
      from public_depth_days d where ${sql.raw(sameMarket)} and d.quote_coin_id = m.quote_key
      order by d.day, d.quote_symbol)
      union all
      select d.day, false, d.cost_to_move_up_usd, d.cost_to_move_down_usd
      from public_depth_days d where ${sql.raw(sameMarket)} and d.quote_symbol = m.quote_key
    ) d
  )`;
}

/**
 * Per obligation market: the median, over its due reported days that have a public depth, of
 * each side's depth share (collected per period market in `by_pm`, so that the reports are
 * read and joined once). The period markets are put in order before their shares are
 * unnested: each market's shares are then sorted on their own, never all of them together.
 */
const DEPTH_SHARES = sql`depth_shares as (
    select ${MARKET_ORDER},
      percentile_cont(0.5) within group (order by s.bid) as bid_share,
      percentile_cont(0.5) within group (order by s.ask) as ask_share
    from (
      select ${sql.raw(P_MARKET)}, b.bid_shares, b.ask_shares
      from periods p join by_pm b using (pm) order by ${MARKET_ORDER}
    ) p cross join lateral unnest(p.bid_shares, p.ask_shares) s(bid, ask)
    group by ${MARKET_ORDER}
  )`;

/**
 * One row per obligation market of the range: days due, reported, late, eligible, met and
 * the per-KPI counts (CONTRACT section 4), for the KPIs `kpiMask` holds (those the periods
 * in scope set: the SQL judges only them). Shaped for a year of 400 markets (146,400
 * market-days):
 * - days due are counted from the periods by date arithmetic up to `lastDue` (the last day
 *   whose deadline has passed), not listed one by one;
 * - only the reports of due days are read (index range scans), each matched to its period
 *   and counted per obligation market with a few plain comparisons (no per-row time zone
 *   conversion, no expression for a KPI nobody set);
 * - a KPI's met days are the period's reported days less its missed ones;
 * - the public depth is read once per market (`public_depth`) and hash-joined to the reports
 *   in the same pass (`by_pm`, `depth_shares`).
 * The day-by-day query (scorecard-days-sql.ts) judges the same days one by one; the tests
 * hold both to the domain's rules.
 */
export function marketScorecards(
  f: ScorecardFilter,
  lastDue: string,
  kpiMask: number,
): RawBuilder<unknown> {
  const to = lastDue < f.dateLte ? lastDue : f.dateLte;
  const kpis = kpisOfMask(kpiMask);
  const perKpi = kpis.map(
    ({ i }) => `coalesce(sum(case when p.kpi_mask & ${kpiBit(i)} <> 0
      then b.reported - b.missed_${i} else 0 end), 0) as met_${i},
      coalesce(sum(b.missed_${i}), 0) as missed_${i}`,
  );
  return sql`with ${periodsCte(f)},
  ${foundCte(f.dateGte, to)},
  ${publicDepthCte()},
  ${countsByPeriodMarket(f, kpis)},
  per_market as (
    select p.organization_id, p.base_coin_id, p.exchange_id, p.quote_key, p.instrument_type,
      sum(greatest(0, least(p.last_day, ${to}::date) - p.first_day + 1)) as due,
      coalesce(sum(b.reported), 0) as reported, coalesce(sum(b.late), 0) as late,
      coalesce(sum(b.eligible), 0) as eligible, coalesce(sum(b.met), 0) as met,
      coalesce(sum(b.flagged), 0) as flagged
      ${sql.raw(perKpi.map((m) => `, ${m}`).join(""))}
    from periods p left join by_pm b using (pm)
    group by ${MARKET_ORDER}
  ),
  ${DEPTH_SHARES}
  select m.*, org.name as organization_name, s.bid_share, s.ask_share
  from per_market m join organizations org on org.id = m.organization_id
  left join depth_shares s using (${MARKET_ORDER})
  order by ${MARKET_ORDER}`;
}

/**
 * What the periods in scope hold before any report is read: how many market-days the
 * day-by-day query would list, and the KPIs they set (a mask).
 */
export function periodSummary(f: ScorecardFilter): RawBuilder<{ n: number; kpi_mask: number }> {
  return sql<{ n: number; kpi_mask: number }>`with ${periodsCte(f)}
    select coalesce(sum(last_day - first_day + 1), 0)::int as n,
      coalesce(bit_or(kpi_mask), 0)::int as kpi_mask
    from periods`;
}
