import { type RawBuilder, sql } from "kysely";
import { KPI_NAMES } from "../domain/obligation.js";
import {
  deadlineSql,
  foundCte,
  kpiBit,
  kpiFailed,
  periodsCte,
  type ScorecardFilter,
} from "./scorecard-sql.js";

/** The KPIs of period `p` report `r` fails, as a mask (see kpiBit). */
const FAILED_MASK = sql.raw(
  KPI_NAMES.map((kpi, i) => `(case when ${kpiFailed(kpi)} then ${kpiBit(i)} else 0 end)`).join(
    " + ",
  ),
);

const FAILED_NAMES = sql.raw(
  `array_remove(array[${KPI_NAMES.map((kpi, i) => `case when failed_mask & ${kpiBit(i)} <> 0 then '${kpi}' end`).join(", ")}]::text[], null)`,
);

/**
 * `scored`: every obligation market and day of the range inside its period, joined with the
 * report of that key (organization, date, exchange, base coin, quote, instrument type, as
 * stored), and judged: `pending` until the deadline has passed, then missing / met / missed,
 * with the KPIs failed; lateness (first accepted after the deadline) and eligibility apart.
 * `judged` is materialized so that each day's KPI mask is computed once, not once per use.
 */
export function scoredDays(f: ScorecardFilter): RawBuilder<unknown> {
  return sql`
  ${periodsCte(f)},
  range_days as (
    select g.day::date as date
    from generate_series(${f.dateGte}::timestamp, ${f.dateLte}::timestamp, interval '1 day') as g(day)
  ),
  days as (
    select p.*, d.date, ${deadlineSql("d.date", f)} as deadline
    from periods p join range_days d on d.date between p.first_day and p.last_day
  ),
  ${foundCte(f.dateGte, f.dateLte)},
  judged as materialized (
    select p.organization_id, p.base_coin_id, p.exchange_id, p.quote_key, p.instrument_type,
      p.date, ${f.now.toISOString()}::timestamptz > p.deadline as due,
      r.id is not null as reported, coalesce(r.created_at > p.deadline, false) as late,
      r.eligibility_status, case when r.id is null then 0 else ${FAILED_MASK} end as failed_mask
    from days p left join found r
      on r.organization_id = p.organization_id and r.date = p.date
      and r.exchange_id = p.exchange_id and r.base_coin_id = p.base_coin_id
      and r.quote_key = p.quote_key and r.instrument_type = p.instrument_type
  ),
  scored as (
    select j.*,
      case when not due then 'pending' when not reported then 'missing'
        when failed_mask <> 0 then 'missed' else 'met' end as status,
      ${FAILED_NAMES} as failed_kpis
    from judged j
  )`;
}
