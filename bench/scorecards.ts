import { type Kysely, sql } from "kysely";
import { addDays, utcDate } from "../src/domain/dates.js";
import type { Tables } from "../src/store/tables.js";
import { FIRST_DATE, orgKey } from "./data.js";

/**
 * The scorecard part of the listing dataset (issue 13): a project owning one coin that 20
 * market makers are each obliged to report on 20 markets (10 exchanges x 2 quotes) every day,
 * over the 366 days ending yesterday, in two obligation periods each (the KPIs tighten
 * half-way). Their reports sit in the same `reports` table as the listing's millions.
 */
export const SCORECARD_PROJECT = "bench-project";
export const SCORECARD_COIN = "coin-000";
const MAKERS = 20;
const EXCHANGES_PER_MAKER = 10;
export const makerId = (i: number) => `bench-mm-${String(i).padStart(2, "0")}`;

/** The fixture organizations of that part (kinds and coins are set in SQL afterwards). */
export function scorecardOrganizations() {
  return [
    {
      id: SCORECARD_PROJECT,
      name: "Bench Project",
      apiKeys: [orgKey(SCORECARD_PROJECT)],
      engagements: [],
    },
    ...Array.from({ length: MAKERS }, (_, m) => ({
      id: makerId(m),
      name: `Bench Market Maker ${m}`,
      apiKeys: [orgKey(makerId(m))],
      engagements: [
        { baseCoinId: SCORECARD_COIN, type: "project" as const, since: FIRST_DATE, until: null },
      ],
    })),
  ];
}

/** The 366 days ending yesterday (UTC): the range of the reports and of the long query. */
export function scorecardRange(now = new Date()) {
  const last = addDays(utcDate(now), -1);
  return { first: addDays(last, -365), last };
}

/**
 * Obligations and reports of the 20 market makers, in SQL. The reports are inserted day by
 * day (each maker's 20 markets of a day together, as one daily batch arrives), with a mix:
 * about 5 % of market-days missing, 8 % late (first accepted at 14:00 the next day instead
 * of 08:00), 6 % v1 reports (no v2-only metric), 10 % below a depth KPI, 10 % ineligible;
 * and a public depth for every market-day (the depth shares' denominators).
 */
export async function scorecardDataset(db: Kysely<Tables>, log: (s: string) => void) {
  const started = performance.now();
  const { first, last } = scorecardRange();
  const mid = addDays(first, 180);
  await sql`update organizations set kind = 'project' where id = ${SCORECARD_PROJECT}`.execute(db);
  await sql`insert into organization_coins values (${SCORECARD_PROJECT}, ${SCORECARD_COIN})
    on conflict do nothing`.execute(db);
  await sql`
    insert into obligations (id, organization_id, base_coin_id, since, until, min_bid_depth_200,
      min_ask_depth_200, min_bid_depth_50, min_ask_depth_50, max_bid_ask_spread,
      min_top_of_book_percentage)
    select md5(m || '/' || p)::uuid, 'bench-mm-' || lpad(m::text, 2, '0'), ${SCORECARD_COIN},
      case when p = 0 then ${addDays(first, -30)}::date else ${mid}::date + 1 end,
      case when p = 0 then ${mid}::date end,
      case when p = 0 then 50000 else 55000 end, 50000, 10000, 10000, 1.0, 40
    from generate_series(0, ${MAKERS - 1}) m, generate_series(0, 1) p
    on conflict do nothing`.execute(db);
  await sql`
    insert into obligation_markets (obligation_id, exchange_id, quote_key, instrument_type)
    select md5(m || '/' || p)::uuid, 'exchange-' || lpad((k % ${EXCHANGES_PER_MAKER})::text, 2, '0'),
      case when k < ${EXCHANGES_PER_MAKER} then 'tether' else 'USD' end, 'spot'
    from generate_series(0, ${MAKERS - 1}) m, generate_series(0, 1) p,
      generate_series(0, ${2 * EXCHANGES_PER_MAKER - 1}) k
    on conflict do nothing`.execute(db);
  await sql`
    insert into reports (organization_id, date, exchange_id, base_coin_id, quote_key,
      instrument_type, quote_coin_id, quote_coin_symbol, type, schema_version,
      bid_depth_tob, bid_depth_10, bid_depth_25, bid_depth_50, bid_depth_100, bid_depth_200,
      ask_depth_tob, ask_depth_10, ask_depth_25, ask_depth_50, ask_depth_100, ask_depth_200,
      bid_ask_depth_50, bid_ask_depth_100, bid_ask_depth_200, bid_ask_spread,
      top_of_book_percentage, order_fill_volume_maker, order_fill_volume_taker,
      order_fill_volume_maker_tob, eligibility_status, eligibility_reason, created_at, updated_at)
    select 'bench-mm-' || lpad(m::text, 2, '0'), day,
      'exchange-' || lpad((k % ${EXCHANGES_PER_MAKER})::text, 2, '0'), ${SCORECARD_COIN},
      case when k < ${EXCHANGES_PER_MAKER} then 'tether' else 'USD' end, 'spot',
      case when k < ${EXCHANGES_PER_MAKER} then 'tether' end,
      case when k >= ${EXCHANGES_PER_MAKER} then 'USD' end, 'project',
      case when v1 then 1 else 2 end,
      case when v1 then null else 2000 end, case when v1 then null else 5000 end,
      case when v1 then null else 8000 end, 12000, 30000, case when thin then 45000 else 60000 end,
      case when v1 then null else 2000 end, case when v1 then null else 5000 end,
      case when v1 then null else 8000 end, 12000, 30000, 61000, 24000, 60000, 121000, 0.4,
      case when v1 then null else 55 end, 250000, 90000, case when v1 then null else 40000 end,
      case when ineligible then 'ineligible_market_data_missing' else 'eligible' end,
      case when ineligible then 'pair_not_found' end,
      day + interval '1 day' + case when late then interval '14 hours' else interval '8 hours' end,
      day + interval '1 day' + interval '8 hours'
    from (
      select d::date as day, m, k,
        (h % 100) < 8 as late, (h / 100 % 100) < 6 as v1, (h / 10000 % 100) < 10 as thin,
        (h / 1000000 % 100) < 10 as ineligible, (h / 100000000 % 100) < 5 as missing
      from generate_series(${first}::date, ${last}::date, interval '1 day') d,
        generate_series(0, ${MAKERS - 1}) m, generate_series(0, ${2 * EXCHANGES_PER_MAKER - 1}) k,
        lateral (select abs(hashtextextended(d::text || '/' || m || '/' || k, 0)) as h) x
    ) g
    where not missing
    order by day, m, k
    on conflict do nothing`.execute(db);
  // Public depth on every market-day, so that medianDepthShare200 is computed, not skipped.
  await sql`
    insert into public_depth_days (exchange_id, base_coin_id, instrument_type, quote_symbol,
      day, quote_coin_id, taken_at, cost_to_move_up_usd, cost_to_move_down_usd)
    select 'exchange-' || lpad(k::text, 2, '0'), ${SCORECARD_COIN}, 'spot', q.symbol, d::date,
      q.coin, d + interval '1 day', 80000 + abs(hashtext(d::text || k || q.symbol)) % 40000,
      80000 + abs(hashtext(q.symbol || k || d::text)) % 40000
    from generate_series(${first}::date, ${last}::date, interval '1 day') d,
      generate_series(0, ${EXCHANGES_PER_MAKER - 1}) k,
      (values ('USDT', 'tether'), ('USD', null)) q(symbol, coin)
    on conflict do nothing`.execute(db);
  await sql`analyze public_depth_days`.execute(db);
  await sql`vacuum analyze reports`.execute(db);
  await sql`analyze obligations`.execute(db);
  await sql`analyze obligation_markets`.execute(db);
  log(`  scorecard dataset (${((performance.now() - started) / 1000).toFixed(0)} s)`);
}

/** The scorecard requests measured, each with the key it is sent with. */
export function scorecardQueries(): Record<string, { path: string; key: string }> {
  const { first, last } = scorecardRange();
  const year = `dateGte=${first}&dateLte=${last}`;
  const project = orgKey(SCORECARD_PROJECT);
  const maker = orgKey(makerId(0));
  return {
    "project, coin, 366 days": {
      path: `/api/v1/scorecards?baseCoinId=${SCORECARD_COIN}&${year}`,
      key: project,
    },
    "project, coin, default 30 days": {
      path: `/api/v1/scorecards?baseCoinId=${SCORECARD_COIN}`,
      key: project,
    },
    "market maker, 366 days": { path: `/api/v1/scorecards?${year}`, key: maker },
    "daily, project, one market maker, 30 days": {
      path: `/api/v1/scorecards/daily?baseCoinId=${SCORECARD_COIN}&organizationId=${makerId(0)}`,
      key: project,
    },
    "daily, market maker, 366 days": { path: `/api/v1/scorecards/daily?${year}`, key: maker },
  };
}

/** The p99 targets (ms, PostgreSQL at 10M reports) of issue 13. */
export const SCORECARD_TARGETS: Record<string, number> = {
  "project, coin, 366 days": 150,
  "project, coin, default 30 days": 50,
};
