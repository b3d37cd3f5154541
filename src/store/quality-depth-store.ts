import { type Kysely, sql } from "kysely";
import {
  DEFAULT_PUBLIC_DEPTH_TOLERANCE,
  type MarketDay,
  type PublicDepthSnapshot,
  QUALITY_FLAGS,
  type QualityFlag,
  qualityFlagBit,
} from "../domain/quality.js";
import { createDepthRecompute } from "./quality-depth-recompute.js";
import type { Tables } from "./tables.js";

/** Public depth snapshots, and the recomputation of the flag that compares reports with them. */
export function createQualityDepthStore(
  db: Kysely<Tables>,
  publicDepthTolerance = DEFAULT_PUBLIC_DEPTH_TOLERANCE,
) {
  return {
    /**
     * Keeps every snapshot (one taken twice is kept once) and makes the latest of each market
     * and day the one flags compare with. Returns the market-days whose compared values
     * changed: their reports' flags need recomputing, and are noted as pending until then.
     */
    async record(snapshots: PublicDepthSnapshot[]): Promise<MarketDay[]> {
      if (snapshots.length === 0) return [];
      const r = await sql<MarketDayRow>`
        with input as (${snapshotRows(snapshots)}),
        kept as (
          insert into public_depth_snapshots (exchange_id, base_coin_id, instrument_type, quote_symbol,
            quote_coin_id, day, taken_at, cost_to_move_up_usd, cost_to_move_down_usd,
            bid_ask_spread_percentage, volume_usd, source)
          select * from input
          on conflict (exchange_id, base_coin_id, instrument_type, quote_symbol, taken_at) do nothing
        ),
        latest as (
          select distinct on (exchange_id, base_coin_id, instrument_type, day, quote_symbol) *
          from input
          order by exchange_id, base_coin_id, instrument_type, day, quote_symbol, taken_at desc
        ),
        changed as (
          insert into public_depth_days as d (exchange_id, base_coin_id, instrument_type,
            quote_symbol, day, quote_coin_id, taken_at, cost_to_move_up_usd, cost_to_move_down_usd,
            bid_ask_spread_percentage, volume_usd)
          select exchange_id, base_coin_id, instrument_type, quote_symbol, day, quote_coin_id,
            taken_at, up, down, spread, volume
          from latest
          on conflict (exchange_id, base_coin_id, instrument_type, day, quote_symbol) do update set
            quote_coin_id = excluded.quote_coin_id, taken_at = excluded.taken_at,
            cost_to_move_up_usd = excluded.cost_to_move_up_usd,
            cost_to_move_down_usd = excluded.cost_to_move_down_usd,
            bid_ask_spread_percentage = excluded.bid_ask_spread_percentage,
            volume_usd = excluded.volume_usd
          where excluded.taken_at > d.taken_at
          returning d.exchange_id, d.base_coin_id, d.instrument_type, d.quote_symbol, d.day
        ),
        noted as (
          insert into public_depth_recompute_pending as p (exchange_id, base_coin_id,
            instrument_type, quote_symbol, day)
          select exchange_id, base_coin_id, instrument_type, quote_symbol, day from changed
          on conflict (exchange_id, base_coin_id, instrument_type, day, quote_symbol) do update
            set note = nextval('public_depth_recompute_notes')
        )
        select exchange_id, base_coin_id, instrument_type, quote_symbol,
          to_char(day, 'YYYY-MM-DD') as day
        from changed`.execute(db);
      return r.rows.map(marketDayOf);
    },

    /**
     * How many stored versions of the organization's reports dated `dateGte`..`dateLte` carry
     * each flag (as each version was flagged when stored); flags no version has are left out.
     */
    async versionFlagCounts(
      organizationId: string,
      dateGte: string,
      dateLte: string,
    ): Promise<Partial<Record<QualityFlag, number>>> {
      const counts = QUALITY_FLAGS.map(
        (flag, i) =>
          `count(*) filter (where v.quality_flags & ${qualityFlagBit(flag)} <> 0)::int as f${i}`,
      );
      const r = await sql<Record<string, number>>`
        select ${sql.raw(counts.join(", "))}
        from reports r join report_versions v on v.report_id = r.id
        where r.organization_id = ${organizationId}
          and r.date between ${dateGte}::date and ${dateLte}::date`.execute(db);
      const row = r.rows[0] ?? {};
      return Object.fromEntries(
        QUALITY_FLAGS.flatMap((flag, i) => ((row[`f${i}`] ?? 0) > 0 ? [[flag, row[`f${i}`]]] : [])),
      );
    },

    /**
     * Returns once every report write in flight now has ended. A submission's statement
     * computes `exceeds_public_depth` from the public depth its snapshot sees, and holds its
     * ROW EXCLUSIVE lock on reports from before that snapshot to its commit; this SHARE lock
     * waits for those holders, holds new ones back while it waits, and is let go at once.
     * Called after new public depth committed, before its recomputation reads reports: a
     * batch that began before the depth, and would commit after the recomputation read past
     * it, would otherwise keep the flag its older snapshot gave it.
     */
    async awaitReportWritesInFlight(): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await sql`lock table reports in share mode`.execute(tx);
      });
    },

    /**
     * The market-days whose flags await recomputing (see migration 024), each with its note:
     * only a recomputation that began after the note was read may clear it.
     */
    async pendingRecomputes(): Promise<PendingRecompute[]> {
      const r = await sql<
        MarketDayRow & { note: string }
      >`select exchange_id, base_coin_id, instrument_type, quote_symbol,
          to_char(day, 'YYYY-MM-DD') as day, note::text as note
        from public_depth_recompute_pending`.execute(db);
      return r.rows.map((row) => ({ day: marketDayOf(row), note: row.note }));
    },

    /** Clears the notes recomputed; a day noted again since keeps its newer note. */
    async clearPendingRecomputes(done: PendingRecompute[]): Promise<void> {
      if (done.length === 0) return;
      const col = <T>(f: (p: PendingRecompute) => T) => done.map(f);
      await sql`delete from public_depth_recompute_pending p
        using unnest(${col((p) => p.day.exchangeId)}::text[], ${col((p) => p.day.baseCoinId)}::text[],
          ${col((p) => p.day.instrumentType)}::text[], ${col((p) => p.day.quoteSymbol)}::text[],
          ${col((p) => p.day.date)}::date[], ${col((p) => p.note)}::bigint[])
          as d(exchange_id, base_coin_id, instrument_type, quote_symbol, day, note)
        where (p.exchange_id, p.base_coin_id, p.instrument_type, p.quote_symbol, p.day, p.note)
          = (d.exchange_id, d.base_coin_id, d.instrument_type, d.quote_symbol, d.day, d.note)`.execute(
        db,
      );
    },
    ...createDepthRecompute(db, publicDepthTolerance),
  };
}

/** A market-day as the statements here return it (`day` as YYYY-MM-DD). */
type MarketDayRow = {
  exchange_id: string;
  base_coin_id: string;
  instrument_type: "spot" | "perp";
  quote_symbol: string;
  day: string;
};

function marketDayOf(row: MarketDayRow): MarketDay {
  return {
    exchangeId: row.exchange_id,
    baseCoinId: row.base_coin_id,
    instrumentType: row.instrument_type,
    quoteSymbol: row.quote_symbol,
    date: row.day,
  };
}

/** The snapshots as rows, one array parameter a column. */
function snapshotRows(snapshots: PublicDepthSnapshot[]) {
  const col = <T>(f: (s: PublicDepthSnapshot) => T) => snapshots.map(f);
  return sql`
    select * from unnest(${col((s) => s.exchangeId)}::text[], ${col((s) => s.baseCoinId)}::text[],
      ${col((s) => s.instrumentType)}::text[], ${col((s) => s.quoteSymbol)}::text[],
      ${col((s) => s.quoteCoinId)}::text[], ${col((s) => s.date)}::date[],
      ${col((s) => s.takenAt.toISOString())}::timestamptz[],
      ${col((s) => s.costToMoveUpUsd)}::float8[], ${col((s) => s.costToMoveDownUsd)}::float8[],
      ${col((s) => s.bidAskSpreadPercentage)}::float8[], ${col((s) => s.volumeUsd)}::float8[],
      ${col((s) => s.source)}::text[])
    as s(exchange_id, base_coin_id, instrument_type, quote_symbol, quote_coin_id, day, taken_at,
      up, down, spread, volume, source)`;
}

export type QualityDepthStore = ReturnType<typeof createQualityDepthStore>;

/** A market-day noted for recomputing, and the note a recomputation may clear. */
export type PendingRecompute = { day: MarketDay; note: string };
