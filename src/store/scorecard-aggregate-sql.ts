import { type RawBuilder, sql } from "kysely";
import { KPI_NAMES, type KpiName } from "../domain/obligation.js";
import {
  deadlineSql,
  kpiBit,
  kpiFailed,
  MARKET_ORDER,
  metricColumnsOf,
  OWED_CTE,
  periodsCte,
  reportsOfOwed,
  type ScorecardFilter,
} from "./scorecard-sql.js";

/** The KPIs a mask (see kpiBit) stands for, with their index in KPI_NAMES. */
export function kpisOfMask(mask: number): { kpi: KpiName; i: number }[] {
  return KPI_NAMES.map((kpi, i) => ({ kpi, i })).filter(({ i }) => (mask & kpiBit(i)) !== 0);
}

/**
 * A report's reported ±2 % depth ÷ public depth on one side (bid against the cost to move the
 * price 2 % down, ask against 2 % up), when its day has a public depth above 0 (none, or 0,
 * gives no share). Only depths from 1e-150 to 1e150 USD are divided (a reported 0 is a share
 * of 0): any finite depth is accepted, and a quotient out of float8's range is an error in
 * PostgreSQL, not an infinity.
 */
const share = (reported: string, side: string) =>
  `case when d.${side} > 0 then case when r.${reported} = 0 then 0::float8
    when r.${reported} between ${SHARE_RANGE} and d.${side} between ${SHARE_RANGE}
    then r.${reported} / d.${side} end end`;
const SHARE_RANGE = "1e-150 and 1e150";

/** The metrics a project compares market makers by (issue 14): their medians. */
const MEDIAN_METRICS = ["bid_depth_200", "ask_depth_200", "bid_ask_spread"];

/**
 * What a scorecard query computes beyond the counts: the medians a project compares market
 * makers by (`medians`: per market and per organization and coin), and each market's
 * median depth shares against the public book (`shares`: the public depth of every judged
 * report's day, a quarter of the query's time, which the dashboard does not show).
 */
export type AggregateParts = { medians: boolean; shares: boolean };

/**
 * `judged`: each report of owed pair `w` of a due day that answers one of the pair's
 * obligation markets (matched to its period), reduced to what the counts need: its market's
 * number, its period's KPI mask, a boolean per KPI it misses (each KPI judged once: whether it
 * was met at all, and which KPIs judged it, are counted from these and the mask), its depth
 * shares (`shares`) and, for `medians`, the metrics they are taken of. `offset 0` evaluates
 * them here, so that the rows sorted for the medians are narrow: a boolean column per KPI
 * judged, or `met` judged a second time, cost a tenth of the query.
 */
function judgedReports(
  f: ScorecardFilter,
  to: string,
  kpis: { kpi: KpiName; i: number }[],
  parts: AggregateParts,
) {
  const { medians, shares } = parts;
  const metrics = medians ? sql.raw(MEDIAN_METRICS.map((c) => `, r.${c}`).join("")) : sql``;
  const perKpi = kpis.map(({ kpi, i }) => `, ${kpiFailed(kpi)} as missed_${i}`);
  return sql`select p.market, p.kpi_mask,
      r.created_at > ${deadlineSql("r.date", f)} as late,
      r.eligibility_status = 'eligible' as eligible, r.quality_flags <> 0 as flagged
      ${sql.raw(perKpi.join(""))}
      ${shares ? SHARES : sql``}
      ${metrics}
    from (${reportsOfOwed(f.dateGte, to, foundColumns(kpis, parts))}) r
    join ${PERIODS_OF_OWED}
    ${shares ? PUBLIC_DEPTH_JOIN : sql``}
    offset 0`;
}

/** The periods `p` of owed pair `w`, each report `r` joined to the one it answers on its day. */
const PERIODS_OF_OWED = sql`(select * from periods p
      where p.organization_id = w.organization_id and p.base_coin_id = w.base_coin_id) p
    on p.exchange_id = r.exchange_id and p.quote_key = r.quote_key
      and p.instrument_type = r.instrument_type and r.date between p.first_day and p.last_day`;

const SHARES = sql.raw(`, ${share("bid_depth_200", "cost_to_move_down_usd")} as bid_share,
      ${share("ask_depth_200", "cost_to_move_up_usd")} as ask_share`);
const PUBLIC_DEPTH_JOIN = sql`left join public_depth d on d.depth_market = p.depth_market
      and d.day = r.date and d.by_coin = (r.quote_coin_id is not null)`;
const SHARE_MEDIANS = sql`, percentile_cont(0.5) within group (order by bid_share) as bid_share,
      percentile_cont(0.5) within group (order by ask_share) as ask_share`;

const median = (column: string) =>
  `percentile_cont(0.5) within group (order by ${column}) as median_${column}`;
const MEDIANS = sql.raw(`, ${MEDIAN_METRICS.map(median).join(", ")}`);

/**
 * `by_market`: per obligation market, its judged reports counted by outcome and, with
 * `shares`, the median of each side's depth share, in one pass (a KPI's met days are the
 * reports its periods judge on it less its missed ones). With `medians`, also the medians a
 * project compares market makers by (issue 14), per market and (rows without a market) per
 * organization and coin: the same sorted pass rolls them up, so that the dashboard reads the
 * reports once (medians per organization alone, sorted apart, took longer than the roll-up).
 * Each owed pair is judged and grouped on its own (a lateral per pair): twenty sorts of a
 * pair's 7,000 reports, each matched against the pair's 40 periods, took a sixth less time
 * than one sort of 140,000 matched against all 800.
 */
function countsByMarket(
  kpis: { kpi: KpiName; i: number }[],
  { medians, shares }: AggregateParts,
  judged: RawBuilder<unknown>,
) {
  const perKpi = kpis.map(({ i }) => {
    const judgedOn = `kpi_mask & ${kpiBit(i)} <> 0`;
    return `, count(*) filter (where ${judgedOn} and not missed_${i}) as met_${i},
      count(*) filter (where missed_${i}) as missed_${i}`;
  });
  const anyMissed = kpis.length === 0 ? "false" : kpis.map(({ i }) => `missed_${i}`).join(" or ");
  return sql`by_market as (
    select a.* from owed w cross join lateral (
    select ${medians ? sql`w.organization_coin, ` : sql``}market, count(*) as reported,
      count(*) filter (where late) as late,
      count(*) filter (where eligible) as eligible, count(*) filter (where flagged) as flagged,
      count(*) filter (where not (${sql.raw(anyMissed)})) as met ${sql.raw(perKpi.join(""))}
      ${shares ? SHARE_MEDIANS : sql``} ${medians ? MEDIANS : sql``}
    from (${judged}) judged
    group by ${medians ? sql`rollup (market)` : sql`market`}
    ) a
  )`;
}

/**
 * `public_depth`: the public depth of each exchange market in scope (`depth_market`) on each
 * day of its periods, keyed as a report finds it (as `publicDepthOf` in quality-sql.ts does):
 * the `by_coin` rows by quote coin id, for reports that name one (that coin's first quote
 * symbol), the others by quote symbol. Two index range scans per market, hash-joined to the
 * reports by market number and day in `judged`: one index probe per report doubled the
 * scorecard's time.
 */
function publicDepthCte() {
  const sameMarket = `d.exchange_id = m.exchange_id and d.base_coin_id = m.base_coin_id
      and d.instrument_type = m.instrument_type and d.day between m.first_day and m.last_day`;
  return sql`markets as (
    select depth_market, exchange_id, base_coin_id, quote_key, instrument_type,
      min(first_day) as first_day, max(last_day) as last_day
    from periods group by depth_market, exchange_id, base_coin_id, quote_key, instrument_type
  ),
  public_depth as materialized (
    select m.depth_market, d.*
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

/** A market's medians (`b`) and its organization and coin's (`o`), of reports judged. */
const MEDIAN_COLUMNS = sql.raw(
  [
    ", b.reported as market_reports, o.reported as organization_reports",
    ...MEDIAN_METRICS.map(
      (c) => `b.median_${c} as market_${c}, o.median_${c} as organization_${c}`,
    ),
  ].join(", "),
);

const SHARE_INPUTS = ["quote_coin_id", "bid_depth_200", "ask_depth_200"];

/** What `judged` reads of a report beyond its key: the metrics judged, the parts' inputs. */
const foundColumns = (kpis: { kpi: KpiName }[], { medians, shares }: AggregateParts) => [
  ...metricColumnsOf(kpis.map(({ kpi }) => kpi)),
  ...(shares ? SHARE_INPUTS : []),
  ...(medians ? MEDIAN_METRICS : []),
];

/**
 * One row per obligation market of the range: days due, reported, late, eligible, met and
 * the per-KPI counts (CONTRACT section 4), for the KPIs `kpiMask` holds (those the periods
 * in scope set: the SQL judges only them), and what `parts` asks for (the medians of the
 * depth shares, those of the metrics). Shaped for a year of 400 markets (146,400 market-days):
 * - days due are counted from the periods by date arithmetic up to `lastDue` (the last day
 *   whose deadline has passed), not listed one by one;
 * - only the reports of due days are read (index range scans), each matched to its period,
 *   judged with a few plain comparisons (no per-row time zone conversion, no expression for a
 *   KPI nobody set) and joined to its day's public depth by market number (`judged`);
 * - the counts and the medians come from one pass over them, grouped by market number
 *   (`by_market`), an organization and coin at a time: collecting each market's shares in
 *   arrays to unnest and sort afterwards cost more than sorting the narrow judged rows.
 * The day-by-day query (scorecard-days-sql.ts) judges the same days one by one; the tests
 * hold both to the domain's rules.
 */
export function marketScorecards(
  f: ScorecardFilter,
  lastDue: string,
  kpiMask: number,
  parts: AggregateParts = { medians: false, shares: true },
): RawBuilder<unknown> {
  const { medians, shares } = parts;
  const to = lastDue < f.dateLte ? lastDue : f.dateLte;
  const kpis = kpisOfMask(kpiMask);
  const perKpi = kpis.map(
    ({ i }) => `, coalesce(b.met_${i}, 0) as met_${i}, coalesce(b.missed_${i}, 0) as missed_${i}`,
  );
  return sql`with ${periodsCte(f)},
  ${OWED_CTE},
  ${shares ? sql`${publicDepthCte()},` : sql``}
  ${countsByMarket(kpis, parts, judgedReports(f, to, kpis, parts))},
  per_market as (
    select market, organization_coin, ${MARKET_ORDER},
      sum(greatest(0, least(last_day, ${to}::date) - first_day + 1)) as due
    from periods group by market, organization_coin, ${MARKET_ORDER}
  )
  select m.organization_id, m.base_coin_id, m.exchange_id, m.quote_key, m.instrument_type,
    m.due, coalesce(b.reported, 0) as reported, coalesce(b.late, 0) as late,
    coalesce(b.eligible, 0) as eligible, coalesce(b.met, 0) as met,
    coalesce(b.flagged, 0) as flagged ${sql.raw(perKpi.join(""))},
    org.name as organization_name ${shares ? sql`, b.bid_share, b.ask_share` : sql``}
    ${medians ? MEDIAN_COLUMNS : sql``},
    (select bit_or(kpi_mask) from periods)::int as scope_kpi_mask
  from per_market m join organizations org on org.id = m.organization_id
  left join by_market b on b.market = m.market
  ${medians ? sql`left join by_market o on o.organization_coin = m.organization_coin and o.market is null` : sql``}
  order by ${MARKET_ORDER}`;
}

export type PeriodSummary = { n: number; kpi_mask: number; organizations: string[] };

/**
 * What the periods in scope hold before any report is read: how many market-days the
 * day-by-day query would list, the KPIs they set (a mask) and the organizations they are
 * owed by, in byte order.
 */
export function periodSummary(f: ScorecardFilter): RawBuilder<PeriodSummary> {
  return sql<PeriodSummary>`with ${periodsCte(f)}
    select coalesce(sum(last_day - first_day + 1), 0)::int as n,
      coalesce(bit_or(kpi_mask), 0)::int as kpi_mask,
      coalesce(array_agg(distinct organization_id order by organization_id), '{}') as organizations
    from periods`;
}
