import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { ReadScope } from "../domain/caller.js";
import {
  KPI_NAMES,
  type KpiName,
  type Kpis,
  type ObligationMarket,
  type ObligationPeriod,
} from "../domain/obligation.js";
import type { InstrumentType } from "../domain/report.js";
import type { KpiColumn, Tables } from "./tables.js";

/** A stored period, with the name of its market maker. */
export type StoredObligation = ObligationPeriod & { organizationName: string };

/** `minBidDepth200` -> `min_bid_depth_200`, `maxBidAskSpread` -> `max_bid_ask_spread`. */
export function kpiColumn(kpi: KpiName): KpiColumn {
  return kpi.replace(/([a-z])([A-Z0-9])/g, "$1_$2").toLowerCase() as KpiColumn;
}
const KPI_COLUMNS = KPI_NAMES.map((kpi) => [kpi, kpiColumn(kpi)] as const);

type Filter = { baseCoinId?: string; organizationId?: string };
/** A period is identified by its organization, coin and first day. */
type PeriodKey = Pick<ObligationPeriod, "organizationId" | "baseCoinId" | "since">;

/** Periods (with their markets) in a scope, ordered by organization, coin and `since`. */
async function listPeriods(
  db: Kysely<Tables>,
  scope: ReadScope,
  filter: Filter = {},
): Promise<StoredObligation[]> {
  if (scope.kind === "coins" && scope.baseCoinIds.length === 0) return [];
  let q = db
    .selectFrom("obligations as o")
    .innerJoin("organizations as org", "org.id", "o.organization_id")
    .leftJoin("obligation_markets as m", "m.obligation_id", "o.id")
    .selectAll("o")
    .select(["org.name as organizationName", "m.exchange_id", "m.quote_key", "m.instrument_type"]);
  if (scope.kind === "organization") q = q.where("o.organization_id", "=", scope.organizationId);
  if (scope.kind === "coins") q = q.where("o.base_coin_id", "in", [...scope.baseCoinIds]);
  if (filter.baseCoinId !== undefined) q = q.where("o.base_coin_id", "=", filter.baseCoinId);
  if (filter.organizationId !== undefined)
    q = q.where("o.organization_id", "=", filter.organizationId);
  const rows = await q
    .orderBy("o.organization_id")
    .orderBy("o.base_coin_id")
    .orderBy("o.since")
    .orderBy("m.exchange_id")
    .orderBy("m.quote_key")
    .orderBy("m.instrument_type")
    .execute();
  return periodsOf(rows);
}

type Row = Record<KpiColumn, number | null> & {
  id: string;
  organization_id: string;
  organizationName: string;
  base_coin_id: string;
  since: string;
  until: string | null;
  exchange_id: string | null;
  quote_key: string | null;
  instrument_type: string | null;
};

/** One period per obligation, its markets gathered from the joined rows. */
function periodsOf(rows: Row[]): StoredObligation[] {
  const periods = new Map<string, StoredObligation>();
  for (const row of rows) {
    let period = periods.get(row.id);
    if (period === undefined) {
      const kpis: Kpis = {};
      for (const [kpi, column] of KPI_COLUMNS) {
        const value = row[column];
        if (value !== null && value !== undefined) kpis[kpi] = Number(value);
      }
      period = {
        organizationId: row.organization_id,
        organizationName: row.organizationName,
        baseCoinId: row.base_coin_id,
        since: row.since,
        until: row.until,
        markets: [],
        kpis,
      };
      periods.set(row.id, period);
    }
    if (row.exchange_id !== null) {
      period.markets.push({
        exchangeId: row.exchange_id,
        quote: row.quote_key ?? "",
        instrumentType: row.instrument_type as InstrumentType,
      });
    }
  }
  return [...periods.values()];
}

export function createObligationStore(db: Kysely<Tables>) {
  const list = (scope: ReadScope, filter: Filter = {}) => listPeriods(db, scope, filter);
  return {
    list,

    /** The periods of one organization and coin (every market maker sees its own). */
    periodsOf(organizationId: string, baseCoinId: string): Promise<StoredObligation[]> {
      return list({ kind: "organization", organizationId }, { baseCoinId });
    },

    /**
     * Inserts a period, or replaces the markets, KPIs and end of the stored one with the same
     * organization, coin and `since`. Returns whether anything changed (an identical period
     * is left untouched, so that loading a fixture again changes nothing).
     */
    async upsert(period: ObligationPeriod): Promise<boolean> {
      const [stored] = (
        await list(
          { kind: "organization", organizationId: period.organizationId },
          { baseCoinId: period.baseCoinId },
        )
      ).filter((p) => p.since === period.since);
      if (stored !== undefined && samePeriod(stored, period)) return false;
      const kpis = Object.fromEntries(
        KPI_COLUMNS.map(([kpi, column]) => [column, period.kpis[kpi] ?? null]),
      ) as Record<KpiColumn, number | null>;
      const row = await db
        .insertInto("obligations")
        .values({
          id: randomUUID(),
          organization_id: period.organizationId,
          base_coin_id: period.baseCoinId,
          since: period.since,
          until: period.until,
          ...kpis,
        })
        .onConflict((oc) =>
          oc
            .columns(["organization_id", "base_coin_id", "since"])
            .doUpdateSet({ until: period.until, ...kpis, updated_at: new Date() }),
        )
        .returning("id")
        .executeTakeFirstOrThrow();
      await db.deleteFrom("obligation_markets").where("obligation_id", "=", row.id).execute();
      await db
        .insertInto("obligation_markets")
        .values(
          period.markets.map((m) => ({
            obligation_id: row.id,
            exchange_id: m.exchangeId,
            quote_key: m.quote,
            instrument_type: m.instrumentType,
          })),
        )
        .execute();
      return true;
    },

    /** Moves the end of the period starting `since` back to `until`. */
    async shorten(period: PeriodKey, until: string): Promise<void> {
      await db
        .updateTable("obligations")
        .set({ until, updated_at: new Date() })
        .where("organization_id", "=", period.organizationId)
        .where("base_coin_id", "=", period.baseCoinId)
        .where("since", "=", period.since)
        .execute();
    },

    /** Removes the period starting `since`, with its markets. */
    async remove(period: PeriodKey): Promise<void> {
      await db
        .deleteFrom("obligations")
        .where("organization_id", "=", period.organizationId)
        .where("base_coin_id", "=", period.baseCoinId)
        .where("since", "=", period.since)
        .execute();
    },

    /** Ends the period of an organization and coin that holds `date` on that day. */
    async end(organizationId: string, baseCoinId: string, date: string): Promise<number> {
      const r = await db
        .updateTable("obligations")
        .set({ until: date, updated_at: new Date() })
        .where("organization_id", "=", organizationId)
        .where("base_coin_id", "=", baseCoinId)
        .where("since", "<=", date)
        .where((eb) => eb.or([eb("until", "is", null), eb("until", ">=", date)]))
        .executeTakeFirst();
      return Number(r.numUpdatedRows);
    },
  };
}

export type ObligationStore = ReturnType<typeof createObligationStore>;

function samePeriod(a: ObligationPeriod, b: ObligationPeriod): boolean {
  const markets = (p: { markets: ObligationMarket[] }) =>
    p.markets
      .map((m) => `${m.exchangeId}\u0000${m.quote}\u0000${m.instrumentType}`)
      .sort()
      .join("\n");
  return (
    a.until === b.until &&
    markets(a) === markets(b) &&
    KPI_NAMES.every((kpi) => (a.kpis[kpi] ?? null) === (b.kpis[kpi] ?? null))
  );
}
