import { type Kysely, sql } from "kysely";
import type { Tables } from "../src/store/tables.js";
import { COINS, DAYS, EXCHANGES, FIRST_DATE, ORGANIZATIONS } from "./data.js";

const SPACE = ORGANIZATIONS * COINS * EXCHANGES * DAYS; // 292,000,000 possible keys
// A multiplier coprime with SPACE maps 0..n-1 onto distinct keys spread over the whole space,
// so the first 1M rows are a subset of the first 10M (the table grows in place).
const SPREAD = 2_654_435_761;

const INDEXES = {
  reports_key_idx: `create unique index reports_key_idx on reports
    (organization_id, date desc, exchange_id, base_coin_id, quote_key, instrument_type) include (id)`,
  reports_base_coin_idx: `create index reports_base_coin_idx on reports
    (organization_id, base_coin_id, date desc, exchange_id, quote_key, instrument_type) include (id)`,
  reports_exchange_idx: `create index reports_exchange_idx on reports
    (organization_id, exchange_id, date desc, base_coin_id, quote_key, instrument_type) include (id)`,
};

/**
 * Grows the reports table to `to` generated rows (from `from`), in SQL: indexes are dropped
 * and rebuilt around the load (far faster than maintaining them row by row), then the table is
 * vacuumed so that index-only scans work as they do on a settled production table.
 */
export async function bulkGenerate(
  db: Kysely<Tables>,
  from: number,
  to: number,
  log: (s: string) => void,
) {
  const started = performance.now();
  for (const name of Object.keys(INDEXES))
    await sql.raw(`drop index if exists ${name}`).execute(db);
  const chunk = 1_000_000;
  for (let lo = from; lo < to; lo += chunk) {
    const hi = Math.min(to, lo + chunk) - 1;
    await sql`
      insert into reports (organization_id, date, exchange_id, base_coin_id, quote_key, instrument_type,
        quote_coin_id, type, schema_version, bid_depth_tob, bid_depth_10, bid_depth_25, bid_depth_50,
        bid_depth_100, bid_depth_200, ask_depth_tob, ask_depth_10, ask_depth_25, ask_depth_50,
        ask_depth_100, ask_depth_200, bid_ask_depth_50, bid_ask_depth_100, bid_ask_depth_200,
        bid_ask_spread, top_of_book_percentage, order_fill_volume_maker, order_fill_volume_taker,
        order_fill_volume_maker_tob, eligibility_status, eligibility_reason)
      select 'org-' || lpad((p % ${ORGANIZATIONS})::text, 2, '0'),
        ${FIRST_DATE}::date + (p / ${ORGANIZATIONS * COINS * EXCHANGES})::int,
        'exchange-' || lpad(((p / ${ORGANIZATIONS * COINS}) % ${EXCHANGES})::text, 2, '0'),
        'coin-' || lpad(((p / ${ORGANIZATIONS}) % ${COINS})::text, 3, '0'),
        'tether', 'spot', 'tether', 'project', 2,
        v, v * 2, v * 3, v * 4, v * 5, v * 6, v, v * 2, v * 3, v * 4, v * 5, v * 6, v * 8, v * 10, v * 12,
        0.25, 40, v * 20, v * 10, v * 5, 'eligible', null
      from (select (i * ${SPREAD}::bigint) % ${SPACE} as p, (i % 100000) / 10.0 as v
            from generate_series(${lo}::bigint, ${hi}::bigint) as i) g`.execute(db);
    log(`  generated ${hi + 1} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  for (const [name, ddl] of Object.entries(INDEXES)) {
    await sql.raw(ddl).execute(db);
    log(`  index ${name} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
  await sql`delete from report_month_counts where organization_id like 'org-%'`
    .execute(db)
    .catch(() => {});
  await sql`delete from report_month_count_deltas where organization_id like 'org-%'`
    .execute(db)
    .catch(() => {});
  await sql`insert into report_month_counts (organization_id, base_coin_id, month, n)
    select organization_id, base_coin_id, date_trunc('month', date)::date, count(*)
    from reports where organization_id like 'org-%' group by 1, 2, 3`
    .execute(db)
    .catch(() => {});
  await sql`vacuum analyze reports`.execute(db);
  await sql`vacuum analyze report_month_counts`.execute(db).catch(() => {});
  log(`  vacuum analyze (${((performance.now() - started) / 1000).toFixed(0)} s)`);
}
