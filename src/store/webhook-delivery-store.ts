import { type Kysely, sql } from "kysely";
import { textArrayLiteral } from "./pg-arrays.js";
import type { Tables } from "./tables.js";

/** A delivery taken for one attempt, with what the attempt sends. */
export type ClaimedDelivery = {
  id: string;
  webhookId: string;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  secret: string;
  type: string;
  occurredAt: Date;
  /** The event's data as stored (the same text on every attempt). */
  dataJson: string;
};

/** An attempt's result to record. */
export type AttemptRecord = {
  id: string;
  /** Attempts made before this one (as claimed): a stale claim records nothing. */
  attemptsBefore: number;
  at: Date;
  statusCode: number | null;
  error: string | null;
  succeeded: boolean;
  /** The next attempt, or null: no more (succeeded, or failed for good). */
  nextAttemptAt: Date | null;
  /** An endpoint failing since this long ago is disabled. */
  disableIfFailingSince: Date;
};

/** The durable queue of deliveries (CONTRACT section 7): claim due ones, record attempts. */
export function createWebhookDeliveryStore(db: Kysely<Tables>) {
  return {
    /**
     * Takes up to `limit` due deliveries of enabled endpoints, oldest due first, for one
     * attempt each: one statement (its own short transaction) moves them out of reach of
     * every other process until `leaseUntil`. SKIP LOCKED: two processes never take one row.
     * `busy`: endpoints left out (the caller has as many attempts to them in flight as it allows).
     */
    async claim(
      now: Date,
      limit: number,
      leaseUntil: Date,
      busy: readonly string[] = [],
    ): Promise<ClaimedDelivery[]> {
      const result = await sql<{
        id: string;
        webhook_id: string;
        attempts: number;
        url: string;
        secret: string;
        type: string;
        occurred_at: Date;
        data: string;
      }>`
        with due as (
          select d.id from webhook_deliveries d
          join webhooks w on w.id = d.webhook_id and not w.disabled
          where d.status = 'pending' and d.next_attempt_at <= ${now}
            and d.webhook_id <> all(${textArrayLiteral([...busy])}::uuid[])
          order by d.next_attempt_at
          limit ${limit}
          for update of d skip locked
        )
        update webhook_deliveries d
        set next_attempt_at = ${leaseUntil}, claimed_until = ${leaseUntil}
        from due, webhooks w, webhook_events e
        where d.id = due.id and w.id = d.webhook_id and e.id = d.event_id and not w.disabled
        returning d.id, d.webhook_id, d.attempts, w.url, w.secret, e.type, e.occurred_at,
          e.data::text as data`.execute(db);
      return result.rows.map((r) => ({
        id: r.id,
        webhookId: r.webhook_id,
        attempts: r.attempts,
        url: r.url,
        secret: r.secret,
        type: r.type,
        occurredAt: new Date(r.occurred_at),
        dataJson: r.data,
      }));
    },

    /**
     * Records an attempt and keeps the endpoint's failing streak: a success ends it, a failure
     * starts it or, once it is old enough, disables the endpoint. Returns whether this attempt
     * disabled it (nothing when the delivery was deleted or retried meanwhile).
     */
    async record(a: AttemptRecord): Promise<{ webhookId: string; disabled: boolean } | null> {
      const status = a.succeeded ? "succeeded" : a.nextAttemptAt === null ? "failed" : "pending";
      const result = await sql<{ id: string; disabled: boolean }>`
        with attempt as (
          update webhook_deliveries
          set status = ${status}, attempts = attempts + 1, last_attempt_at = ${a.at},
            last_status_code = ${a.statusCode}, last_error = ${a.error},
            next_attempt_at = ${a.nextAttemptAt}, claimed_until = null
          where id = ${a.id} and status = 'pending' and attempts = ${a.attemptsBefore}
          returning webhook_id
        )
        update webhooks w
        set failing_since = case when ${a.succeeded}::boolean then null
              else coalesce(w.failing_since, ${a.at}::timestamptz) end,
            disabled = w.disabled or (not ${a.succeeded}::boolean
              and coalesce(w.failing_since, ${a.at}::timestamptz)
                <= ${a.disableIfFailingSince}::timestamptz)
        from attempt
        where w.id = attempt.webhook_id
        returning w.id, (w.disabled and not (select disabled from webhooks
          where id = w.id)) as disabled`.execute(db);
      const row = result.rows[0];
      return row === undefined ? null : { webhookId: row.id, disabled: row.disabled };
    },
  };
}

export type WebhookDeliveryStore = ReturnType<typeof createWebhookDeliveryStore>;
