import { type Kysely, sql } from "kysely";
import type { ObservedFlags, QualityOutcome } from "../domain/webhook-quality-rules.js";
import { textArrayLiteral } from "./pg-arrays.js";
import type { Tables } from "./tables.js";
import { type MarketDayRow, marketDayOfRow } from "./webhook-producer-rows.js";

const ids = (reportIds: readonly number[]) => textArrayLiteral(reportIds.map(String));

/**
 * The quality.flagged part of the webhook event producer (migration 014). Every method is
 * meant to run in the transaction of one pass of the producer, after its lock was taken.
 */
export function createWebhookQualityStore(db: Kysely<Tables>) {
  return {
    /** Takes (deletes and returns) up to `limit` notes of reports a recomputation changed. */
    async takeChanges(limit: number): Promise<number[]> {
      const r = await sql<{ report_id: string }>`
        delete from webhook_quality_changes
        where ctid = any(array(select ctid from webhook_quality_changes limit ${limit}))
        returning report_id::text`.execute(db);
      return r.rows.map((row) => Number(row.report_id));
    },

    /** Forgets every noted change (the first pass ever: they predate notifications). */
    async discardChanges(): Promise<void> {
      await sql`delete from webhook_quality_changes`.execute(db);
    },

    /** The current flags of these reports, observed `at`, by report id. */
    async currentFlags(
      reportIds: readonly number[],
      at: Date,
    ): Promise<Map<number, ObservedFlags>> {
      if (reportIds.length === 0) return new Map();
      const r = await sql<MarketDayRow & { id: string; quality_flags: number }>`
        select r.id::text, r.organization_id, r.base_coin_id, r.exchange_id, r.quote_key,
          r.instrument_type, to_char(r.date, 'YYYY-MM-DD') as date, r.quality_flags
        from reports r where r.id = any(${ids(reportIds)}::bigint[])`.execute(db);
      return new Map(
        r.rows.map((row) => [
          Number(row.id),
          { ...marketDayOfRow(row), flags: Number(row.quality_flags), at },
        ]),
      );
    },

    /** The kept outcomes of these reports (reports never flagged have none), by report id. */
    async outcomes(reportIds: readonly number[]): Promise<Map<number, QualityOutcome>> {
      if (reportIds.length === 0) return new Map();
      const r = await sql<{ report_id: string; flags: number; announced: number }>`
        select report_id::text, flags, announced from webhook_quality_outcomes
        where report_id = any(${ids(reportIds)}::bigint[])`.execute(db);
      return new Map(
        r.rows.map((row) => [
          Number(row.report_id),
          { flags: Number(row.flags), announced: Number(row.announced) },
        ]),
      );
    },

    async saveOutcomes(outcomes: ReadonlyMap<number, QualityOutcome>): Promise<void> {
      if (outcomes.size === 0) return;
      const list = [...outcomes];
      await sql`insert into webhook_quality_outcomes as o (report_id, flags, announced)
        select * from unnest(${ids(list.map(([id]) => id))}::bigint[],
          ${textArrayLiteral(list.map(([, o]) => String(o.flags)))}::smallint[],
          ${textArrayLiteral(list.map(([, o]) => String(o.announced)))}::int[])
        on conflict (report_id) do update
          set flags = excluded.flags, announced = excluded.announced`.execute(db);
    },
  };
}

export type WebhookQualityStore = ReturnType<typeof createWebhookQualityStore>;
