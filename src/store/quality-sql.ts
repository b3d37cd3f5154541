import { EXCEEDS_PUBLIC_DEPTH_BIT } from "../domain/quality.js";

/**
 * The `exceeds_public_depth` bit of the report (or input row) `alias`, by the public depth of
 * its market and day: bidDepth200 against the cost to move the price 2 % down, askDepth200
 * against 2 % up, each allowed to exceed it by `tolerance` (a SQL expression: a share). A
 * report matches a market as eligibility does: by quote coin id when it names one, else by
 * quote symbol. No snapshot, or an absent side, raises nothing. A public depth counts as at most
 * 1e300 USD: any finite one is accepted, and times the tolerance it could leave float8's
 * range, an error in PostgreSQL (the submission's statement would fail).
 */
/** The public_depth_days row `d` of report `alias`'s market and day (see exceedsPublicDepthSql). */
export function publicDepthOf(alias: string): string {
  return `d.exchange_id = ${alias}.exchange_id and d.base_coin_id = ${alias}.base_coin_id
      and d.instrument_type = ${alias}.instrument_type and d.day = ${alias}.date
      and case when ${alias}.quote_coin_id is null then d.quote_symbol = ${alias}.quote_key
        else d.quote_coin_id = ${alias}.quote_key end`;
}

export function exceedsPublicDepthSql(alias: string, tolerance: string): string {
  return `coalesce((select case when ${alias}.bid_depth_200 > least(d.cost_to_move_down_usd, 1e300) * (1 + ${tolerance})
      or ${alias}.ask_depth_200 > least(d.cost_to_move_up_usd, 1e300) * (1 + ${tolerance})
      then ${EXCEEDS_PUBLIC_DEPTH_BIT} else 0 end
    from public_depth_days d where ${publicDepthOf(alias)}
    order by d.quote_symbol limit 1), 0)`;
}

/**
 * `left join lateral (…) x on true`: `x.bit` is the `exceeds_public_depth` bit of report
 * `alias` (null without a snapshot), looked up once per row, where a subquery in the select
 * list and again in the where clause would be run twice for every row that changes.
 */
export function publicDepthBitJoin(alias: string, tolerance: string): string {
  return `left join lateral (select case when ${alias}.bid_depth_200 > least(d.cost_to_move_down_usd, 1e300) * (1 + ${tolerance})
      or ${alias}.ask_depth_200 > least(d.cost_to_move_up_usd, 1e300) * (1 + ${tolerance})
      then ${EXCEEDS_PUBLIC_DEPTH_BIT} else 0 end as bit
    from public_depth_days d where ${publicDepthOf(alias)}
    order by d.quote_symbol limit 1) x on true`;
}
