import { type Kysely, sql } from "kysely";
import {
  DISABLED_NOT_SENT,
  type PreviousSecret,
  UNSUBSCRIBED_NOT_SENT,
} from "../domain/webhook.js";
import { textArrayLiteral } from "./pg-arrays.js";
import type { Tables } from "./tables.js";
import { type ClaimShares, pickDue } from "./webhook-claim-picks.js";
import { endpointHears, endpointSubscribes } from "./webhook-event-store.js";
import { previousSecretsOf } from "./webhook-secret-store.js";

/** A delivery taken for one attempt, with what the attempt sends. */
export type ClaimedDelivery = {
  id: string;
  webhookId: string;
  /** Attempts made before this one. */
  attempts: number;
  url: string;
  secret: string;
  /** The secrets rotations replaced (see signatureHeader). */
  previousSecrets: PreviousSecret[];
  type: string;
  occurredAt: Date;
  /** The event's data as stored (the same text on every attempt). */
  dataJson: string;
  /** A failed or succeeded delivery retried by hand: this attempt is its last. */
  finalAttempt: boolean;
  /** Attempts made by hand before this one (they use up none of the retry schedule). */
  manualAttempts: number;
  /**
   * A pending delivery retried by hand: this attempt is the manual one, and its next scheduled
   * attempt is due at this time again if it fails (null: a scheduled attempt).
   */
  resumeAt: Date | null;
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
  /** Made by hand (POST .../retry): not one of the retry schedule's. */
  manual: boolean;
  /** An endpoint failing since this long ago is disabled. */
  disableIfFailingSince: Date;
};

const OUT_OF_SCOPE = "not sent: the endpoint's organization may no longer read this event";
const UNSTORABLE_ERROR = "the attempt failed; its error text could not be stored";

/** Claims of every process are made one at a time (pg_try_advisory_xact_lock). */
const CLAIM_LOCK_ID = 727_016;

/** The durable queue of deliveries (CONTRACT section 7): claim due ones, record attempts. */
export function createWebhookDeliveryStore(db: Kysely<Tables>) {
  return {
    /**
     * Takes up to `limit` due deliveries for one attempt each (one of a disabled endpoint or
     * out of its scope fails instead), moving them out of reach of every process until
     * `leaseUntil`; within `shares` (per endpoint and per organization, counted over every
     * process: the deliveries whose lease has not ended), organizations take turns, oldest due
     * first (see pickDue). Run inside a
     * transaction: claims of all processes take turns on an advisory lock, so that each counts
     * the others' committed claims; none (another process is claiming): nothing is taken now.
     * SKIP LOCKED, and the re-check of the due time on the locked row: two processes never
     * take one delivery.
     */
    async claim(
      now: Date,
      limit: number,
      leaseUntil: Date,
      shares: ClaimShares = { perEndpoint: limit, perOrganization: limit, reserved: 0 },
    ): Promise<ClaimedDelivery[]> {
      if (!db.isTransaction) throw new Error("claim runs inside a transaction");
      const lock = await sql<{ locked: boolean }>`
        select pg_try_advisory_xact_lock(${CLAIM_LOCK_ID}) as locked`.execute(db);
      if (lock.rows[0]?.locked !== true) return [];
      const ids = await pickDue(db, now, limit, shares);
      if (ids.length === 0) return [];
      const result = await sql<ClaimedDelivery>`
        with due as (
          select d.id, w.disabled, ${endpointSubscribes} as subscribed,
            not w.disabled and ${endpointSubscribes} and ${endpointHears} as in_scope
          from webhook_deliveries d join webhooks w on w.id = d.webhook_id
          join webhook_events e on e.id = d.event_id
          join organizations o on o.id = w.organization_id
          where d.id = any(${textArrayLiteral(ids)}::uuid[])
            and d.status = 'pending' and d.next_attempt_at <= ${now}
          for update of d skip locked
        ),
        ${take(leaseUntil)}`.execute(db);
      return result.rows.map((r) => ({
        ...r,
        previousSecrets: previousSecretsOf(r.previousSecrets),
        occurredAt: new Date(r.occurredAt),
        resumeAt: r.resumeAt === null ? null : new Date(r.resumeAt),
      }));
    },

    /**
     * Records an attempt and keeps the endpoint's failing streak: a success ends it, a failure
     * starts it or, once it is old enough, disables the endpoint. Returns whether this attempt
     * disabled it (nothing when the delivery was deleted or retried meanwhile).
     */
    async record(a: AttemptRecord): Promise<{ webhookId: string; disabled: boolean } | null> {
      if (a.error === null || !db.isTransaction) return recordAttempt(db, a);
      // The receiver wrote part of the error text: were it refused, the turn's transaction,
      // and so every endpoint's claims, would fail on every turn. It is recorded without it.
      await sql`savepoint webhook_attempt`.execute(db);
      try {
        return await recordAttempt(db, a);
      } catch (error) {
        if (!isRefusedText(error)) throw error;
        await sql`rollback to savepoint webhook_attempt`.execute(db);
        return recordAttempt(db, { ...a, error: UNSTORABLE_ERROR });
      }
    },
  };
}

/**
 * Text the database's encoding cannot hold (SQLSTATE 22021, a NUL byte among them; 22P05).
 * Anything else, a deadlock say, fails the turn as before: its retry records the real text.
 */
function isRefusedText(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "22021" || code === "22P05";
}

async function recordAttempt(db: Kysely<Tables>, a: AttemptRecord) {
  const status = a.succeeded ? "succeeded" : a.nextAttemptAt === null ? "failed" : "pending";
  const result = await sql<{ id: string; disabled: boolean }>`
    with attempt as (
      update webhook_deliveries
      set status = ${status}, attempts = attempts + 1, last_attempt_at = ${a.at},
        last_status_code = ${a.statusCode}, last_error = ${a.error},
        next_attempt_at = ${a.nextAttemptAt}, claimed_until = null, final_attempt = false,
        manual_attempts = manual_attempts + ${a.manual ? 1 : 0}, resume_at = null
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
}

/**
 * The claim's last step, over `due` (locked deliveries and whether their endpoint may still
 * hear of the event): a delivery whose endpoint may no longer hear of its event, no longer
 * subscribes to its type, or was disabled (an event recorded while it was being disabled),
 * fails instead of being sent; the others are leased until their next due time.
 */
const take = (leaseUntil: Date) => sql`taken as (
  update webhook_deliveries d
  set next_attempt_at = case when due.in_scope then ${leaseUntil}::timestamptz end,
    claimed_until = case when due.in_scope then ${leaseUntil}::timestamptz end,
    status = case when due.in_scope then 'pending' else 'failed' end,
    last_error = case when due.in_scope then d.last_error
      when due.disabled then ${DISABLED_NOT_SENT}
      when not due.subscribed then ${UNSUBSCRIBED_NOT_SENT} else ${OUT_OF_SCOPE} end
  from due, webhooks w, webhook_events e
  where d.id = due.id and w.id = d.webhook_id and e.id = d.event_id
  returning d.id, d.webhook_id as "webhookId", d.attempts, w.url, w.secret,
    w.previous_secrets as "previousSecrets", e.type,
    e.occurred_at as "occurredAt", e.data::text as "dataJson", d.final_attempt as "finalAttempt",
    d.manual_attempts as "manualAttempts", d.resume_at as "resumeAt", due.in_scope
)
select id, "webhookId", attempts, url, secret, "previousSecrets", type,
  "occurredAt", "dataJson", "finalAttempt",
  "manualAttempts", "resumeAt"
from taken where in_scope`;

export type WebhookDeliveryStore = ReturnType<typeof createWebhookDeliveryStore>;
