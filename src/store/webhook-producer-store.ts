import { type Kysely, sql } from "kysely";
import type { MarketDay } from "../domain/webhook-event.js";
import { type KpiOutcome, marketDayKey } from "../domain/webhook-event-rules.js";
import { textArrayLiteral } from "./pg-arrays.js";
import type { Tables } from "./tables.js";
import { type MarketDayRow, marketDayOfRow } from "./webhook-producer-rows.js";
import { versionsToJudge } from "./webhook-version-feed.js";

// Any constant will do; it only has to be the same in every process of this service.
const PRODUCER_LOCK_ID = 727_011;

/** Where the producer stands (migration 011 explains each field). */
export type ProducerState = {
  startedAt: Date;
  firstDay: string;
  deadlinesDone: string;
  versionsSeen: number;
  /** This pass wrote the state: the first pass ever. */
  firstPass: boolean;
};

/** A changed obligation period or engagement: its days are judged again. */
export type ChangedPeriod = {
  organizationId: string;
  baseCoinId: string;
  since: string;
  until: string | null;
};

/** The six key columns of market days, as unnest() parameters. */
function marketDays(days: readonly MarketDay[], more = sql``, moreNames = sql``) {
  const column = (pick: (d: MarketDay) => string) => textArrayLiteral(days.map(pick));
  return sql`unnest(${column((d) => d.organizationId)}::text[], ${column((d) => d.baseCoinId)}::text[],
    ${column((d) => d.exchangeId)}::text[], ${column((d) => d.quote)}::text[],
    ${column((d) => d.instrumentType)}::text[], ${column((d) => d.date)}::date[]${more})
    as k(organization_id, base_coin_id, exchange_id, quote_key, instrument_type, date${moreNames})`;
}

const KEY_MATCH = sql`t.organization_id = k.organization_id and t.base_coin_id = k.base_coin_id
  and t.exchange_id = k.exchange_id and t.quote_key = k.quote_key
  and t.instrument_type = k.instrument_type and t.date = k.date`;

/**
 * The webhook event producer's own tables (migration 011). Every method is meant to run in
 * the transaction of one pass, after `tryLock` said this pass is the only one.
 */
export function createWebhookProducerStore(db: Kysely<Tables>) {
  return {
    /** Whether this transaction may make a pass (no other process is making one). */
    async tryLock(): Promise<boolean> {
      const r = await sql<{ locked: boolean }>`
        select pg_try_advisory_xact_lock(${PRODUCER_LOCK_ID}) as locked`.execute(db);
      return r.rows[0]?.locked === true;
    },

    /**
     * The state; the first pass ever made writes it. Versions stored before that pass are not
     * read: their days' deadlines either passed before notifications started (never
     * announced) or are still ahead (the days are judged at their deadlines).
     */
    async state(init: { startedAt: Date; firstDay: string }): Promise<ProducerState> {
      const written = await sql`insert into webhook_event_producer
          (started_at, first_day, deadlines_done, versions_seen)
        select ${init.startedAt}, ${init.firstDay}::date, ${init.firstDay}::date - 1,
          coalesce((select max(id) from report_versions), 0)
        on conflict do nothing returning 1`.execute(db);
      const r = await sql<{
        started_at: Date;
        first_day: string;
        deadlines_done: string;
        versions_seen: number;
      }>`select started_at, to_char(first_day, 'YYYY-MM-DD') as first_day,
          to_char(deadlines_done, 'YYYY-MM-DD') as deadlines_done, versions_seen
        from webhook_event_producer`.execute(db);
      const row = r.rows[0];
      if (row === undefined) throw new Error("webhook_event_producer has no row");
      return {
        startedAt: new Date(row.started_at),
        firstDay: row.first_day,
        deadlinesDone: row.deadlines_done,
        versionsSeen: Number(row.versions_seen),
        firstPass: written.rows.length > 0,
      };
    },

    async saveProgress(progress: { deadlinesDone: string; versionsSeen: number }): Promise<void> {
      await sql`update webhook_event_producer set deadlines_done = ${progress.deadlinesDone}::date,
        versions_seen = ${progress.versionsSeen}`.execute(db);
    },

    /** The versions to judge, and the holes: the pass's first statement (see versionsToJudge). */
    versionsToJudge: (limit: number) => versionsToJudge(db, limit),

    /** Takes (deletes and returns) up to `limit` noted changes of periods and engagements. */
    async takeChanges(limit: number): Promise<ChangedPeriod[]> {
      const r = await sql<{
        organization_id: string;
        base_coin_id: string;
        since: string;
        until: string | null;
      }>`delete from webhook_obligation_changes
        where id in (select id from webhook_obligation_changes order by id limit ${limit})
        returning organization_id, base_coin_id, to_char(since, 'YYYY-MM-DD') as since,
          to_char(until, 'YYYY-MM-DD') as until`.execute(db);
      return r.rows.map((row) => ({
        organizationId: row.organization_id,
        baseCoinId: row.base_coin_id,
        since: row.since,
        until: row.until,
      }));
    },

    /**
     * The market-days of reports, in these days of an organization and coin, whose latest
     * version was stored at `since` or later.
     */
    async reportedSince(
      ranges: readonly {
        organizationId: string;
        baseCoinId: string;
        dateGte: string;
        dateLte: string;
      }[],
      since: Date,
    ): Promise<MarketDay[]> {
      if (ranges.length === 0) return [];
      const column = (pick: (r: (typeof ranges)[number]) => string) =>
        textArrayLiteral(ranges.map(pick));
      const r = await sql<MarketDayRow>`
        select distinct t.organization_id, t.base_coin_id, t.exchange_id, t.quote_key,
          t.instrument_type, to_char(t.date, 'YYYY-MM-DD') as date
        from unnest(${column((r) => r.organizationId)}::text[], ${column((r) => r.baseCoinId)}::text[],
          ${column((r) => r.dateGte)}::date[], ${column((r) => r.dateLte)}::date[])
          as k(organization_id, base_coin_id, date_gte, date_lte)
        join reports t on t.organization_id = k.organization_id
          and t.base_coin_id = k.base_coin_id and t.date between k.date_gte and k.date_lte
        where t.updated_at >= ${since}`.execute(db);
      return r.rows.map(marketDayOfRow);
    },

    /** When the reports of these market days were first accepted (by key). */
    async receivedAt(days: readonly MarketDay[]): Promise<Map<string, Date>> {
      if (days.length === 0) return new Map();
      const r = await sql<MarketDayRow & { created_at: Date }>`
        select ${KEY_SELECT}, t.created_at from ${marketDays(days)}
        join reports t on ${KEY_MATCH}`.execute(db);
      return new Map(r.rows.map((row) => [keyOfRow(row), new Date(row.created_at)]));
    },

    /** The kept kpi.missed outcomes of these market days (by key). */
    async outcomes(days: readonly MarketDay[]): Promise<Map<string, KpiOutcome>> {
      if (days.length === 0) return new Map();
      const r = await sql<MarketDayRow & { failed_kpis: string[]; announced: number }>`
        select ${KEY_SELECT}, t.failed_kpis, t.announced from ${marketDays(days)}
        join webhook_kpi_outcomes t on ${KEY_MATCH}`.execute(db);
      return new Map(
        r.rows.map((row) => [
          keyOfRow(row),
          { failedKpis: row.failed_kpis, announced: Number(row.announced) },
        ]),
      );
    },

    /** Keeps the new kpi.missed outcomes of these market days. */
    async saveOutcomes(outcomes: readonly { day: MarketDay; outcome: KpiOutcome }[]) {
      if (outcomes.length === 0) return;
      const failed = outcomes.map((o) => JSON.stringify(o.outcome.failedKpis));
      const announced = outcomes.map((o) => String(o.outcome.announced));
      await sql`insert into webhook_kpi_outcomes as t (organization_id, base_coin_id, exchange_id,
          quote_key, instrument_type, date, failed_kpis, announced)
        select k.organization_id, k.base_coin_id, k.exchange_id, k.quote_key, k.instrument_type,
          k.date, array(select json_array_elements_text(k.failed::json)), k.announced
        from ${marketDays(
          outcomes.map((o) => o.day),
          sql`, ${textArrayLiteral(failed)}::text[], ${textArrayLiteral(announced)}::int[]`,
          sql`, failed, announced`,
        )}
        on conflict (organization_id, base_coin_id, date, exchange_id, quote_key, instrument_type)
        do update set failed_kpis = excluded.failed_kpis, announced = excluded.announced`.execute(
        db,
      );
    },
  };
}

const KEY_SELECT = sql`k.organization_id, k.base_coin_id, k.exchange_id, k.quote_key,
  k.instrument_type, to_char(k.date, 'YYYY-MM-DD') as date`;

const keyOfRow = (row: MarketDayRow): string => marketDayKey(marketDayOfRow(row));

export type WebhookProducerStore = ReturnType<typeof createWebhookProducerStore>;
