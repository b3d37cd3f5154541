import { type Kysely, sql } from "kysely";
import type { MarketPair } from "../domain/eligibility.js";
import {
  ELIGIBILITY_STATUSES,
  type EligibilityReason,
  type InstrumentType,
} from "../domain/report.js";
import type { Tables } from "./tables.js";

// The status strings come from the domain, as parameters: defined once, not restated in SQL.
const [ELIGIBLE, INELIGIBLE] = ELIGIBILITY_STATUSES;

/** The eligibility of every report of one market pair, split at the pair's collection start. */
export type PairEligibility = {
  pair: MarketPair;
  collectedSince: string | null;
  /** For reports dated before `collectedSince` (or all reports when it is null). */
  reasonBefore: EligibilityReason | null;
  /** For reports dated on or after `collectedSince`. */
  reasonFrom: EligibilityReason | null;
};

/**
 * The reports a reference-data load may have changed the eligibility of: those on an exchange
 * whose market data flag changed, and those of an (exchange, base coin, instrument type) whose
 * markets changed.
 */
export type EligibilityScope = {
  exchangeIds: string[];
  markets: { exchangeId: string; baseCoinId: string; instrumentType: InstrumentType }[];
};

type PairRow = {
  exchange_id: string;
  base_coin_id: string;
  instrument_type: InstrumentType;
  quote_key: string;
  by_symbol: boolean;
};

const PAIR_COLUMNS = sql`r.exchange_id, r.base_coin_id, r.instrument_type, r.quote_key,
  r.quote_coin_id is null as by_symbol`;

export function createEligibilityStore(db: Kysely<Tables>) {
  return {
    /**
     * Every distinct market pair reports refer to, across organizations; with a scope, only
     * those of the reports in it. A scoped read walks each organization's key indexes (which
     * lead with the organization) instead of the whole table, so that a load changing one
     * market reads that market's reports only.
     */
    async reportedPairs(scope?: EligibilityScope): Promise<MarketPair[]> {
      const rows =
        scope === undefined
          ? await sql<PairRow>`select distinct ${PAIR_COLUMNS} from reports r`.execute(db)
          : await scopedPairs(db, scope);
      return rows.rows.map((r) => ({
        exchangeId: r.exchange_id,
        baseCoinId: r.base_coin_id,
        instrumentType: r.instrument_type,
        quoteCoinId: r.by_symbol ? null : r.quote_key,
        quoteSymbol: r.by_symbol ? r.quote_key : "",
      }));
    },

    /**
     * Writes the eligibility of every report of the given pairs in one statement, touching only
     * the rows whose eligibility changes. Returns how many changed. `few` (a scoped load) finds
     * the pairs' reports organization by organization through the key indexes; otherwise
     * the planner is free to scan the table.
     */
    async apply(pairs: PairEligibility[], few = false): Promise<number> {
      if (pairs.length === 0) return 0;
      const col = <T>(f: (p: PairEligibility) => T) => pairs.map(f);
      const result = await sql`
        with target as (
          select r.id,
            case when g.collected_since is not null and r.date >= g.collected_since
              then g.reason_from else g.reason_before end as reason
          from unnest(${col((p) => p.pair.exchangeId)}::text[], ${col((p) => p.pair.baseCoinId)}::text[],
            ${col((p) => p.pair.instrumentType)}::text[],
            ${col((p) => p.pair.quoteCoinId ?? p.pair.quoteSymbol)}::text[],
            ${col((p) => p.pair.quoteCoinId === null)}::boolean[],
            ${col((p) => p.collectedSince)}::date[], ${col((p) => p.reasonBefore)}::text[],
            ${col((p) => p.reasonFrom)}::text[])
            as g(exchange_id, base_coin_id, instrument_type, quote_key, by_symbol, collected_since,
              reason_before, reason_from)
          ${few ? sql`join organizations o on true join reports r on r.organization_id = o.id and` : sql`join reports r on`}
            r.exchange_id = g.exchange_id and r.base_coin_id = g.base_coin_id
            and r.instrument_type = g.instrument_type and r.quote_key = g.quote_key
            and (r.quote_coin_id is null) = g.by_symbol
        )
        update reports r set eligibility_reason = t.reason,
          eligibility_status = case when t.reason is null then ${ELIGIBLE}::text
            else ${INELIGIBLE}::text end
        from target t
        where r.id = t.id and r.eligibility_reason is distinct from t.reason`.execute(db);
      return Number(result.numAffectedRows ?? 0);
    },
  };
}

export type EligibilityStore = ReturnType<typeof createEligibilityStore>;

/** The distinct pairs of the reports in `scope`, found through each organization's indexes. */
async function scopedPairs(db: Kysely<Tables>, scope: EligibilityScope) {
  const m = scope.markets;
  if (m.length === 0 && scope.exchangeIds.length === 0) return { rows: [] };
  return sql<PairRow>`
    select distinct ${PAIR_COLUMNS}
    from organizations o
    cross join unnest(${m.map((x) => x.exchangeId)}::text[], ${m.map((x) => x.baseCoinId)}::text[],
      ${m.map((x) => x.instrumentType)}::text[]) as g(exchange_id, base_coin_id, instrument_type)
    join reports r on r.organization_id = o.id and r.base_coin_id = g.base_coin_id
      and r.exchange_id = g.exchange_id and r.instrument_type = g.instrument_type
    union
    select distinct ${PAIR_COLUMNS}
    from organizations o
    cross join unnest(${scope.exchangeIds}::text[]) as e(exchange_id)
    join reports r on r.organization_id = o.id and r.exchange_id = e.exchange_id`.execute(db);
}
