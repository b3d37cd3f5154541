import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import type { OrganizationKind } from "../../src/domain/caller.js";
import { KPI_NAMES, type Kpis, type ObligationMarket } from "../../src/domain/obligation.js";
import { METRICS, type Metric } from "../../src/domain/report.js";
import { metricColumn } from "../../src/store/report-store.js";
import { kpiColumn } from "../../src/store/scorecard-sql.js";
import type { Tables } from "../../src/store/tables.js";

/**
 * Obligation periods and organization kinds written straight into the tables (issue 13b builds
 * the fixture, CLI and store for obligations, 13a the organization kinds): scorecard tests do
 * not depend on them.
 */
export async function insertObligation(
  db: Kysely<Tables>,
  period: {
    organizationId: string;
    baseCoinId: string;
    since: string;
    until?: string | null;
    markets: ObligationMarket[];
    kpis: Kpis;
  },
): Promise<string> {
  const id = randomUUID();
  const kpiValues = Object.fromEntries(
    KPI_NAMES.map((kpi) => [kpiColumn(kpi), period.kpis[kpi] ?? null]),
  );
  await db
    .insertInto("obligations")
    .values({
      id,
      organization_id: period.organizationId,
      base_coin_id: period.baseCoinId,
      since: period.since,
      until: period.until ?? null,
      ...kpiValues,
    })
    .execute();
  if (period.markets.length > 0) {
    await db
      .insertInto("obligation_markets")
      .values(
        period.markets.map((m) => ({
          obligation_id: id,
          exchange_id: m.exchangeId,
          quote_key: m.quote,
          instrument_type: m.instrumentType,
        })),
      )
      .execute();
  }
  return id;
}

/** Makes an organization a project owning `coins`, or the operator. */
export async function setOrganizationKind(
  db: Kysely<Tables>,
  organizationId: string,
  kind: OrganizationKind,
  coins: string[] = [],
): Promise<void> {
  await db.updateTable("organizations").set({ kind }).where("id", "=", organizationId).execute();
  await db.deleteFrom("organization_coins").where("organization_id", "=", organizationId).execute();
  if (coins.length > 0) {
    await db
      .insertInto("organization_coins")
      .values(coins.map((c) => ({ organization_id: organizationId, base_coin_id: c })))
      .execute();
  }
}

/** A stored report written straight into `reports` (no submission), for scoring tests. */
export type DirectReport = {
  organizationId: string;
  baseCoinId: string;
  date: string;
  market: ObligationMarket;
  metrics: Record<Metric, number | null>;
  createdAt: Date;
  eligible: boolean;
};

export async function insertReports(db: Kysely<Tables>, reports: DirectReport[]): Promise<void> {
  if (reports.length === 0) return;
  await db
    .insertInto("reports")
    .values(
      reports.map((s) => ({
        organization_id: s.organizationId,
        date: s.date,
        exchange_id: s.market.exchangeId,
        base_coin_id: s.baseCoinId,
        quote_key: s.market.quote,
        instrument_type: s.market.instrumentType,
        schema_version: 2,
        eligibility_status: s.eligible ? "eligible" : "ineligible_market_data_missing",
        eligibility_reason: s.eligible ? null : "pair_not_found",
        created_at: s.createdAt,
        ...Object.fromEntries(METRICS.map((m) => [metricColumn(m), s.metrics[m]])),
      })),
    )
    .execute();
}

/** Every metric at `value`. */
export const allMetrics = (value: number) =>
  Object.fromEntries(METRICS.map((m) => [m, value])) as Record<Metric, number>;
