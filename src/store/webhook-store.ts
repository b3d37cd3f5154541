import { type Kysely, type Selectable, sql } from "kysely";
import type { WebhookEventType } from "../domain/webhook-event.js";
import type { Tables } from "./tables.js";
import { endpointSubscribes } from "./webhook-event-store.js";

/** A stored endpoint, as its organization sees it (never the secret). */
export type StoredWebhook = {
  id: string;
  url: string;
  events: ("*" | Exclude<WebhookEventType, "webhook.test">)[];
  description: string | null;
  disabled: boolean;
  createdAt: string;
};

export type StoredDelivery = {
  id: string;
  eventType: WebhookEventType;
  createdAt: string;
  status: "pending" | "succeeded" | "failed";
  attempts: number;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
};

type Attempted = { id: string; disabledBy: string };
const iso = (d: Date | null) => (d === null ? null : d.toISOString());

function webhookOf(row: Selectable<Tables["webhooks"]>): StoredWebhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events as StoredWebhook["events"],
    description: row.description,
    disabled: row.disabled,
    createdAt: row.created_at.toISOString(),
  };
}

/**
 * Subscribed endpoints and their delivery logs. Every query names the organization: an
 * endpoint of another organization is not found, whatever its id.
 */
export function createWebhookStore(db: Kysely<Tables>) {
  const own = (organizationId: string, id: string) =>
    db
      .selectFrom("webhooks")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("id", "=", id);
  const hasDelivery = async (webhookId: string, deliveryId: string): Promise<boolean> => {
    const row = await db
      .selectFrom("webhook_deliveries")
      .select("id")
      .where("webhook_id", "=", webhookId)
      .where("id", "=", deliveryId)
      .executeTakeFirst();
    return row !== undefined;
  };

  return {
    async count(organizationId: string): Promise<number> {
      const row = await db
        .selectFrom("webhooks")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("organization_id", "=", organizationId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    async create(input: {
      id: string;
      organizationId: string;
      url: string;
      events: string[];
      description: string | null;
      secret: string;
      now: Date;
    }): Promise<StoredWebhook> {
      const row = await db
        .insertInto("webhooks")
        .values({
          id: input.id,
          organization_id: input.organizationId,
          url: input.url,
          events: input.events,
          description: input.description,
          secret: input.secret,
          created_at: input.now,
          updated_at: input.now,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return webhookOf(row);
    },

    async list(organizationId: string): Promise<StoredWebhook[]> {
      const rows = await db
        .selectFrom("webhooks")
        .selectAll()
        .where("organization_id", "=", organizationId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return rows.map(webhookOf);
    },

    async get(organizationId: string, id: string): Promise<StoredWebhook | undefined> {
      const row = await own(organizationId, id).executeTakeFirst();
      return row === undefined ? undefined : webhookOf(row);
    },

    /** Changes the given fields; undefined when the organization has no such endpoint. */
    async update(
      organizationId: string,
      id: string,
      patch: { url?: string; events?: string[]; description?: string | null; disabled?: boolean },
      now: Date,
    ): Promise<StoredWebhook | undefined> {
      // Waits for the transactions queueing deliveries for it (a key-share lock): failPending, in
      // this transaction, then fails theirs too; later ones wait and see the endpoint disabled.
      if (patch.disabled === true)
        await sql`select 1 from webhooks where id = ${id} and organization_id = ${organizationId}
          for update`.execute(db);
      const row = await db
        .updateTable("webhooks")
        .set({
          ...patch,
          updated_at: now,
          // Enabled again: its failing streak starts afresh.
          ...(patch.disabled === false ? { failing_since: null } : {}),
        })
        .where("organization_id", "=", organizationId)
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst();
      return row === undefined ? undefined : webhookOf(row);
    },

    /** Deletes the endpoint and its deliveries (nothing more is sent to it). */
    async remove(organizationId: string, id: string): Promise<boolean> {
      const result = await db
        .deleteFrom("webhooks")
        .where("organization_id", "=", organizationId)
        .where("id", "=", id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** One page of an endpoint's deliveries, newest first. */
    async deliveries(
      webhookId: string,
      query: { status?: string; offset: number; limit: number },
    ): Promise<{ totalCount: number; items: StoredDelivery[] }> {
      let base = db.selectFrom("webhook_deliveries as d").where("d.webhook_id", "=", webhookId);
      if (query.status !== undefined) base = base.where("d.status", "=", query.status);
      const [count, rows] = await Promise.all([
        base.select((eb) => eb.fn.countAll<string>().as("n")).executeTakeFirstOrThrow(),
        base
          .innerJoin("webhook_events as e", "e.id", "d.event_id")
          .select([
            "d.id",
            "e.type",
            "d.created_at",
            "d.status",
            "d.attempts",
            "d.last_attempt_at",
            "d.last_status_code",
            "d.last_error",
            "d.next_attempt_at",
          ])
          .orderBy("d.created_at", "desc")
          .orderBy("d.id", "desc")
          .offset(query.offset)
          .limit(query.limit)
          .execute(),
      ]);
      return {
        totalCount: Number(count.n),
        items: rows.map((r) => ({
          id: r.id,
          eventType: r.type as WebhookEventType,
          createdAt: r.created_at.toISOString(),
          status: r.status as StoredDelivery["status"],
          attempts: r.attempts,
          lastAttemptAt: iso(r.last_attempt_at),
          lastStatusCode: r.last_status_code,
          lastError: r.last_error,
          nextAttemptAt: iso(r.next_attempt_at),
        })),
      };
    },

    /** Whether the endpoint has this delivery. */
    hasDelivery,

    /**
     * Makes a delivery of the endpoint due now, for one attempt more: a failed or succeeded
     * one's last; a pending one's made by hand, after which its next scheduled attempt is due
     * when it was (resume_at; one already due is simply made now, no extra one). "queued", or
     * "in_progress" while an attempt of it is being made, or "not_found".
     */
    async retry(webhookId: string, deliveryId: string, now: Date) {
      // Every right-hand side reads the row as it was; least() ignores a null next_attempt_at.
      const result = await sql`
        update webhook_deliveries
        set status = 'pending', next_attempt_at = least(next_attempt_at, ${now}),
          final_attempt = final_attempt or status <> 'pending',
          resume_at = case when status <> 'pending' then null
            else coalesce(resume_at, case when next_attempt_at > ${now} then next_attempt_at end)
          end
        where webhook_id = ${webhookId} and id = ${deliveryId}
          and (claimed_until is null or claimed_until <= ${now})
        returning id`.execute(db);
      if (result.rows.length > 0) return "queued";
      return (await hasDelivery(webhookId, deliveryId)) ? "in_progress" : "not_found";
    },

    /**
     * Fails the pending deliveries of event types the endpoint no longer subscribes to, but
     * not one an attempt holds (its outcome is recorded; a lease that ended is the claim's).
     */
    async failUnsubscribed(webhookId: string, reason: string): Promise<void> {
      await sql`
        update webhook_deliveries d set status = 'failed', next_attempt_at = null,
          last_error = ${reason}
        from webhooks w, webhook_events e
        where d.webhook_id = ${webhookId} and d.status = 'pending' and d.claimed_until is null
          and w.id = d.webhook_id and e.id = d.event_id and not ${endpointSubscribes}`.execute(db);
    },

    /** Fails a disabled endpoint's pending deliveries; `attempted` (it disabled it) keeps its answer. */
    async failPending(webhookId: string, reason: string, attempted?: Attempted) {
      await sql`
        update webhook_deliveries d set status = 'failed', next_attempt_at = null,
          last_error = case when d.id = ${attempted?.id ?? null}::uuid then left(
            ${attempted?.disabledBy ?? ""} || '; last attempt: ' || d.last_error, 300)
            else ${reason} end
        from webhooks w
        where d.webhook_id = ${webhookId} and d.status = 'pending'
          and w.id = d.webhook_id and w.disabled`.execute(db);
    },
  };
}

export type WebhookStore = ReturnType<typeof createWebhookStore>;
