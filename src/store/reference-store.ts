import { type Kysely, sql } from "kysely";
import type { ReferenceSnapshot } from "../domain/reference-data.js";
import type { InstrumentType } from "../domain/report.js";
import type { EligibilityScope } from "./eligibility-store.js";
import type { Tables } from "./tables.js";

type Db = Kysely<Tables>;

/** The advisory lock that reference-data loads and full eligibility recomputes take turns on. */
const REFERENCE_CHANGE_LOCK_ID = 727_021;

export function createReferenceStore(db: Kysely<Tables>) {
  return {
    async version(): Promise<number> {
      const row = await db
        .selectFrom("reference_data_version")
        .select("version")
        .executeTakeFirst();
      return row?.version ?? 0;
    },

    /**
     * Takes turns with every other reference-data load and full eligibility recompute, for
     * the rest of the transaction (an advisory lock: submissions do not wait for it). Taken
     * before the first read, so that what a load compares with (an exchange's market data
     * flag before, say) is what the load before it committed: read first, two loads at once
     * could each judge the other's change as none, and leave reports unrecomputed.
     */
    async takeTurnToChange(): Promise<void> {
      if (!db.isTransaction) throw new Error("takeTurnToChange needs a transaction");
      await sql`select pg_advisory_xact_lock(${REFERENCE_CHANGE_LOCK_ID})`.execute(db);
    },

    async snapshot(): Promise<{ version: number; snapshot: ReferenceSnapshot }> {
      const read = async (trx: Db) => {
        const version = await trx
          .selectFrom("reference_data_version")
          .select("version")
          .executeTakeFirst();
        const coins = await trx.selectFrom("coins").select(["id", "symbol", "name"]).execute();
        const exchanges = await trx
          .selectFrom("exchanges")
          .select([
            "id",
            "name",
            "spot",
            "derivatives",
            "market_data as marketData",
            "exchange_group as group",
          ])
          .execute();
        const markets = await trx
          .selectFrom("markets")
          .select([
            "exchange_id as exchangeId",
            "base_coin_id as baseCoinId",
            "quote_coin_id as quoteCoinId",
            "quote_symbol as quoteSymbol",
            "instrument_type as instrumentType",
            "collected_since as collectedSince",
          ])
          .execute();
        return {
          version: version?.version ?? 0,
          snapshot: {
            coins,
            exchanges,
            markets: markets.map((m) => ({
              ...m,
              instrumentType: m.instrumentType as InstrumentType,
            })),
          },
        };
      };
      // One snapshot: the version and the rows it describes, read in one transaction.
      return db.isTransaction ? read(db) : db.transaction().execute(read);
    },

    /**
     * Inserts or updates coins, exchanges and markets (never deletes: reports keep referring to
     * them). Returns how many rows changed and the exchanges and markets that did (the reports
     * whose eligibility may change: a coin's name or symbol decides none); the version is
     * bumped only when something changed, so loading the same data twice changes nothing.
     */
    async upsert(data: ReferenceSnapshot, at = new Date()): Promise<ReferenceChanges> {
      const coins = await upsertCoins(db, data.coins);
      const exchanges = await upsertExchanges(db, data.exchanges);
      const markets = await upsertMarkets(db, data.markets);
      const changed = coins + exchanges.changed + markets.length;
      if (changed > 0) {
        // Submissions validated against the old version must either commit before this load
        // goes on (so that its eligibility recomputation sees them) or see the new version and
        // re-validate (report-store's upsert). This lock, held to commit, waits for the
        // batches in flight and holds new ones back. It conflicts with itself, so two loads
        // queue instead of deadlocking.
        await sql`lock table reports in share row exclusive mode`.execute(db);
        // What runs under this lock is a few index walks (eligibility-store's scoped reads),
        // yet at 10 M reports their estimates pass jit_above_cost: PostgreSQL then compiled
        // them for ~450 ms, most of a pause that ran 15 ms without it.
        await sql`set local jit = off`.execute(db);
        await db
          .updateTable("reference_data_version")
          .set((eb) => ({ version: eb("version", "+", 1), changed_at: at }))
          .execute();
      }
      return { changed, scope: { exchangeIds: exchanges.marketDataChanged, markets } };
    },
  };
}

/** What a reference-data load changed: a row count, and the reports it may concern. */
export type ReferenceChanges = { changed: number; scope: EligibilityScope };

export type ReferenceStore = ReturnType<typeof createReferenceStore>;

async function upsertCoins(db: Db, coins: ReferenceSnapshot["coins"]): Promise<number> {
  let changed = 0;
  for (const coin of coins) {
    const r = await db
      .insertInto("coins")
      .values(coin)
      .onConflict((oc) =>
        oc
          .column("id")
          .doUpdateSet({ symbol: coin.symbol, name: coin.name })
          .where((eb) =>
            eb.or([eb("coins.symbol", "!=", coin.symbol), eb("coins.name", "!=", coin.name)]),
          ),
      )
      .executeTakeFirst();
    changed += Number(r.numInsertedOrUpdatedRows ?? 0);
  }
  return changed;
}

/**
 * Upserts the exchanges; returns how many changed, and the ids of those whose market data
 * flag changed or that are new (a name, group or instrument flag decides no eligibility).
 */
async function upsertExchanges(
  db: Db,
  exchanges: ReferenceSnapshot["exchanges"],
): Promise<{ changed: number; marketDataChanged: string[] }> {
  const stored = await db.selectFrom("exchanges").select(["id", "market_data"]).execute();
  const marketDataBefore = new Map(stored.map((e) => [e.id, e.market_data]));
  let changed = 0;
  const marketDataChanged: string[] = [];
  for (const e of exchanges) {
    const row = {
      id: e.id,
      name: e.name,
      spot: e.spot,
      derivatives: e.derivatives,
      market_data: e.marketData,
      exchange_group: e.group,
    };
    const r = await db
      .insertInto("exchanges")
      .values(row)
      .onConflict((oc) =>
        oc
          .column("id")
          .doUpdateSet(row)
          .where(
            sql<boolean>`(exchanges.name, exchanges.spot, exchanges.derivatives, exchanges.market_data,
            exchanges.exchange_group) is distinct from
            (excluded.name, excluded.spot, excluded.derivatives, excluded.market_data, excluded.exchange_group)`,
          ),
      )
      .returning("id")
      .executeTakeFirst();
    if (r === undefined) continue;
    changed++;
    if (marketDataBefore.get(e.id) !== e.marketData) marketDataChanged.push(e.id);
  }
  return { changed, marketDataChanged };
}

/** All markets in one statement; returns the (exchange, base coin, type) of those that changed. */
async function upsertMarkets(
  db: Db,
  markets: ReferenceSnapshot["markets"],
): Promise<EligibilityScope["markets"]> {
  if (markets.length === 0) return [];
  const m = markets;
  const r = await sql<{
    exchange_id: string;
    base_coin_id: string;
    instrument_type: InstrumentType;
  }>`
      insert into markets (exchange_id, base_coin_id, instrument_type, quote_symbol, quote_coin_id, collected_since)
      select * from unnest(${m.map((x) => x.exchangeId)}::text[], ${m.map((x) => x.baseCoinId)}::text[],
        ${m.map((x) => x.instrumentType)}::text[], ${m.map((x) => x.quoteSymbol)}::text[],
        ${m.map((x) => x.quoteCoinId)}::text[], ${m.map((x) => x.collectedSince)}::date[])
      on conflict (exchange_id, base_coin_id, instrument_type, quote_symbol) do update set
        quote_coin_id = excluded.quote_coin_id, collected_since = excluded.collected_since
      where (markets.quote_coin_id, markets.collected_since)
        is distinct from (excluded.quote_coin_id, excluded.collected_since)
      returning exchange_id, base_coin_id, instrument_type`.execute(db);
  return r.rows.map((row) => ({
    exchangeId: row.exchange_id,
    baseCoinId: row.base_coin_id,
    instrumentType: row.instrument_type,
  }));
}
