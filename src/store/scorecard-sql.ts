import { type RawBuilder, sql } from "kysely";
import type { ReadScope } from "../domain/caller.js";
import { deadlineOf, KPI_NAMES, KPIS, type KpiName } from "../domain/obligation.js";
import { metricColumn, RECORD_KEY_COLUMNS } from "./report-store.js";

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
  /** Only these organizations (a share of the scope, scored on a connection of its own). */
  organizationIds?: readonly string[];
  baseCoinId?: string;
  dateGte: string;
  dateLte: string;
  /** Days whose deadline is not past at this time are pending. */
  now: Date;
  /** `HH:MM` (UTC): day D is due by D+1 at this time. */
  deadlineUtc: string;
};

/**
 * Day D's deadline as SQL over a date expression: the domain's `deadlineOf` for one date of
 * the range, moved by whole days of 24 hours (UTC has no daylight saving). Plain timestamp
 * arithmetic: `at time zone` per row cost more than the rest of the comparison.
 */
export function deadlineSql(date: string, f: ScorecardFilter): RawBuilder<unknown> {
  const base = deadlineOf(f.dateGte, f.deadlineUtc).toISOString();
  return sql`(${base}::timestamptz + (${sql.raw(date)} - ${f.dateGte}::date) * interval '24 hours')`;
}

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
  if (f.organizationIds !== undefined)
    conditions.push(sql`o.organization_id = any(${[...f.organizationIds]}::text[])`);
  if (f.baseCoinId !== undefined) conditions.push(sql`o.base_coin_id = ${f.baseCoinId}`);
  return sql.join(conditions, sql` and `);
}

/** Bit i of a KPI mask stands for KPI_NAMES[i]. */
export const kpiBit = (i: number) => 1 << i;

const PERIOD_KPIS = sql.raw(KPI_NAMES.map((kpi) => `o.${kpiColumn(kpi)}`).join(", "));
/** The KPIs a period sets, as a mask. */
const PERIOD_KPI_MASK = sql.raw(
  KPI_NAMES.map(
    (kpi, i) => `(case when o.${kpiColumn(kpi)} is null then 0 else ${kpiBit(i)} end)`,
  ).join(" + "),
);

/**
 * `periods`: each obligation market of each period in scope that meets the range, with the
 * part of the range inside the period and its engagement, the period's KPI thresholds and
 * mask, and three numbers: `market`, its obligation market's rank in MARKET_ORDER,
 * `depth_market`, its exchange market's (whose public depth it is judged against), and
 * `organization_coin`, its organization and coin's, so that the aggregate groups and joins on
 * integers rather than on text columns.
 */
export function periodsCte(f: ScorecardFilter): RawBuilder<unknown> {
  // A period counts only inside an engagement of its organization for the coin: one that
  // outlived its engagement (ended later) owes nothing, and shows nothing, after it.
  const firstDay = sql`greatest(o.since, e.since, ${f.dateGte}::date)`;
  const lastDay = sql`least(coalesce(o.until, ${f.dateLte}::date), coalesce(e.until, ${f.dateLte}::date), ${f.dateLte}::date)`;
  return sql`periods as (
    select dense_rank() over (order by o.organization_id, o.base_coin_id, m.exchange_id,
        m.quote_key, m.instrument_type) as market,
      dense_rank() over (order by m.exchange_id, o.base_coin_id, m.quote_key,
        m.instrument_type) as depth_market,
      dense_rank() over (order by o.organization_id, o.base_coin_id) as organization_coin,
      o.organization_id, o.base_coin_id, m.exchange_id, m.quote_key, m.instrument_type,
      ${firstDay} as first_day, ${lastDay} as last_day,
      ${PERIOD_KPI_MASK} as kpi_mask, ${PERIOD_KPIS}
    from obligations o join obligation_markets m on m.obligation_id = o.id
      join engagements e on e.organization_id = o.organization_id
        and e.base_coin_id = o.base_coin_id
    where ${obligationWhere(f)} and ${firstDay} <= ${lastDay}
  )`;
}

/** The key of a report and what every scoring query reads of it. */
const REPORT_KEY_COLUMNS = [
  "organization_id",
  ...RECORD_KEY_COLUMNS,
  "created_at",
  "eligibility_status",
  "quality_flags",
];

/** The metric columns the KPIs of `kpis` judge. */
export const metricColumnsOf = (kpis: readonly KpiName[]): string[] => [
  ...new Set(kpis.map((kpi) => metricColumn(KPIS[kpi].metric))),
];

/**
 * `found`: the reports of each organization and coin owed in `periods`, dated `from` to `to`
 * (see `reportsOfOwed`), with their id and every metric a KPI judges.
 */
export function foundCte(from: string, to: string): RawBuilder<unknown> {
  const columns = ["id", ...metricColumnsOf(KPI_NAMES)];
  return sql`${OWED_CTE},
  found as (
    select r.* from owed w cross join lateral (${reportsOfOwed(from, to, columns)}) r
  )`;
}

/** `owed`: each organization and coin of `periods` (and its number), once. */
export const OWED_CTE = sql`owed as (
    select distinct organization_id, base_coin_id, organization_coin from periods
  )`;

/**
 * The reports of `owed` pair `w`, dated `from` to `to`, with their key, arrival, eligibility,
 * flags and the `columns` asked for (only what is read: each column a row carries costs): one
 * range scan of the (organization, base coin, date) index per pair, never one lookup per
 * market and day. `offset 0` keeps the subquery as written: inlined, the planner pushed each
 * obligation market's key into a scan per market over the same index, reading every entry of
 * the pair once per market (2.9 million entries for 146,400 reports).
 */
export function reportsOfOwed(
  from: string,
  to: string,
  columns: readonly string[],
): RawBuilder<unknown> {
  const read = sql.raw(
    [...REPORT_KEY_COLUMNS, ...new Set(columns)].map((c) => `r.${c}`).join(", "),
  );
  return sql`select ${read} from reports r
      where r.organization_id = w.organization_id and r.base_coin_id = w.base_coin_id
        and r.date between ${from}::date and ${to}::date
      offset 0`;
}

/**
 * Whether report `r` fails one KPI of period `p`, as SQL: false when the period does not set
 * it; a null value fails. Generated from the domain's KPIS catalogue, so that the rule (min:
 * value >= threshold, max: value <= threshold) is written once.
 */
export function kpiFailed(kpi: KpiName, period = "p"): string {
  const { metric, bound } = KPIS[kpi];
  const threshold = `${period}.${kpiColumn(kpi)}`;
  const compare = bound === "min" ? ">=" : "<=";
  return `(${threshold} is not null and not coalesce(r.${metricColumn(metric)} ${compare} ${threshold}, false))`;
}

export const MARKET_ORDER = sql`organization_id, base_coin_id, exchange_id, quote_key, instrument_type`;
