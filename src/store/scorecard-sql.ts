import { type RawBuilder, sql } from "kysely";
import type { ReadScope } from "../domain/caller.js";
import { KPI_NAMES, KPIS, type KpiName } from "../domain/obligation.js";
import { metricColumn } from "./report-store.js";

/** `minBidDepth200` -> `min_bid_depth_200`: an obligation's column for each KPI. */
export const kpiColumn = (kpi: KpiName): string =>
  kpi
    .replace(/([A-Z])/g, "_$1")
    .replace(/(\d+)/g, "_$1")
    .toLowerCase()
    .replace(/__/g, "_");

/** What a scorecard query covers: the caller's scope, its filters, the dates and the clock. */
export type ScorecardFilter = {
  scope: ReadScope;
  organizationId?: string;
  baseCoinId?: string;
  dateGte: string;
  dateLte: string;
  /** Days whose deadline is not past at this time are pending. */
  now: Date;
  /** `HH:MM` (UTC): day D is due by D+1 at this time. */
  deadlineUtc: string;
};

/** Scope and filters, on the obligation `o`. */
function obligationWhere(f: ScorecardFilter): RawBuilder<unknown> {
  const conditions = [
    sql`o.since <= ${f.dateLte}::date`,
    sql`(o.until is null or o.until >= ${f.dateGte}::date)`,
  ];
  if (f.scope.kind === "organization")
    conditions.push(sql`o.organization_id = ${f.scope.organizationId}`);
  if (f.scope.kind === "coins")
    conditions.push(sql`o.base_coin_id = any(${[...f.scope.baseCoinIds]}::text[])`);
  if (f.organizationId !== undefined) conditions.push(sql`o.organization_id = ${f.organizationId}`);
  if (f.baseCoinId !== undefined) conditions.push(sql`o.base_coin_id = ${f.baseCoinId}`);
  return sql.join(conditions, sql` and `);
}

/**
 * Whether the day's report meets one KPI, as SQL: null when the period does not set it or no
 * report is there (it does not apply), else true or false. A null value misses it. Generated
 * from the domain's KPIS catalogue, so that the rule (min: >=, max: <=) is written once.
 */
function kpiOutcome(kpi: KpiName): string {
  const { metric, bound } = KPIS[kpi];
  const threshold = `d.${kpiColumn(kpi)}`;
  const value = `r.${metricColumn(metric)}`;
  const compare = bound === "min" ? ">=" : "<=";
  return `case when ${threshold} is null or r.id is null then null
    else coalesce(${value} ${compare} ${threshold}, false) end`;
}

/** `k0` .. `k14`: the outcome column of each KPI, in KPI_NAMES order. */
export const kpiAlias = (i: number) => `k${i}`;

const KPI_OUTCOMES = sql.raw(
  KPI_NAMES.map((kpi, i) => `${kpiOutcome(kpi)} as ${kpiAlias(i)}`).join(",\n    "),
);
const ANY_FAILED = sql.raw(
  `(${KPI_NAMES.map((_, i) => `coalesce(not ${kpiAlias(i)}, false)`).join(" or ")})`,
);
const FAILED_NAMES = sql.raw(
  `array_remove(array[${KPI_NAMES.map((kpi, i) => `case when not ${kpiAlias(i)} then '${kpi}' end`).join(", ")}]::text[], null)`,
);
const PERIOD_KPIS = sql.raw(KPI_NAMES.map((kpi) => `o.${kpiColumn(kpi)}`).join(", "));

/**
 * Every obligation market and day of the range inside its period, joined with the report of
 * that key (organization, date, exchange, base coin, quote, instrument type, as stored), and
 * judged: `pending` until the deadline has passed, then missing / met / missed; lateness
 * (first accepted after the deadline), eligibility, and each KPI's outcome. One set-based
 * statement: the days are generated, the reports found by the key index, no row per day is
 * sent to Node for the aggregate.
 */
export function scoredDays(f: ScorecardFilter): RawBuilder<unknown> {
  const [hours, minutes] = f.deadlineUtc.split(":").map(Number);
  const offsetMinutes = (hours ?? 0) * 60 + (minutes ?? 0);
  return sql`
  periods as (
    select o.organization_id, o.base_coin_id, m.exchange_id, m.quote_key, m.instrument_type,
      greatest(o.since, ${f.dateGte}::date) as first_day,
      least(coalesce(o.until, ${f.dateLte}::date), ${f.dateLte}::date) as last_day,
      ${PERIOD_KPIS}
    from obligations o join obligation_markets m on m.obligation_id = o.id
    where ${obligationWhere(f)}
  ),
  days as (
    select p.*, g.day::date as date,
      (g.day + interval '1 day' + make_interval(mins => ${offsetMinutes}::int)) at time zone 'UTC'
        as deadline
    from periods p,
      generate_series(p.first_day::timestamp, p.last_day::timestamp, interval '1 day') as g(day)
  ),
  judged as (
    select d.organization_id, d.base_coin_id, d.exchange_id, d.quote_key, d.instrument_type,
      d.date, ${f.now.toISOString()}::timestamptz <= d.deadline as pending,
      r.id is not null as reported,
      coalesce(r.created_at > d.deadline, false) as late,
      r.eligibility_status,
    ${KPI_OUTCOMES}
    from days d left join reports r
      on r.organization_id = d.organization_id and r.date = d.date
      and r.exchange_id = d.exchange_id and r.base_coin_id = d.base_coin_id
      and r.quote_key = d.quote_key and r.instrument_type = d.instrument_type
  ),
  scored as (
    select j.*,
      case when pending then 'pending' when not reported then 'missing'
        when ${ANY_FAILED} then 'missed' else 'met' end as status,
      ${FAILED_NAMES} as failed_kpis
    from judged j
  )`;
}

/** The per-KPI counts of the aggregate: days met and missed among due reported days. */
export const KPI_COUNTS = sql.raw(
  KPI_NAMES.map(
    (_, i) =>
      `count(*) filter (where status <> 'pending' and ${kpiAlias(i)}) as met_${i},
      count(*) filter (where status <> 'pending' and not ${kpiAlias(i)}) as missed_${i}`,
  ).join(",\n      "),
);

export const MARKET_ORDER = sql`organization_id, base_coin_id, exchange_id, quote_key, instrument_type`;
