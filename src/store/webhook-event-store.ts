import { randomUUID } from "node:crypto";
import { type Kysely, type RawBuilder, sql } from "kysely";
import {
  isOwnOrganizationOnly,
  WEBHOOK_EVENT_TYPES,
  type WebhookEvent,
} from "../domain/webhook-event.js";
import { textArrayLiteral } from "./pg-arrays.js";
import type { Tables } from "./tables.js";

/**
 * Records events and, in the same statement, queues one delivery per subscribed endpoint that
 * may hear of each: the concerned organization's, the projects' owning the event's coin and
 * the operators' (only the organization's own for `submission.rejected`; only the named
 * endpoint for `webhook.test`). Disabled endpoints get nothing. An event whose `dedupKey` was
 * recorded before is skipped, deliveries included. Run it inside the transaction of the change
 * that raised the events, so that both commit or neither does.
 */
export function createWebhookEventStore(db: Kysely<Tables>) {
  return {
    /**
     * Returns how many events were new (recorded, whatever their number of deliveries). While
     * no endpoint is enabled anywhere nothing is recorded: an event is only ever read through
     * its deliveries, and the webhook producer's outcomes, not the events, decide what is new.
     * Without this, ingest of reports that are all flagged cost a quality.flagged row per
     * version for no reader (half of a producer pass, issue 19).
     */
    async publish(events: readonly WebhookEvent[], now: Date): Promise<number> {
      if (events.length === 0) return 0;
      const listening = await sql<{ any: boolean }>`
        select exists (select 1 from webhooks where not disabled) as any`.execute(db);
      if (listening.rows[0]?.any !== true) return 0;
      const column = <T>(pick: (e: WebhookEvent) => T) => events.map(pick);
      const result = await sql<{ recorded: number }>`
        with new_events as (
          insert into webhook_events
            (id, type, organization_id, base_coin_id, webhook_id, data, occurred_at, dedup_key,
             created_at)
          select e.id, e.type, e.organization_id, e.base_coin_id, e.webhook_id, e.data::json,
                 e.occurred_at, e.dedup_key, ${now}
          from unnest(
            ${textArrayLiteral(column(() => randomUUID()))}::uuid[],
            ${textArrayLiteral(column((e) => e.type))}::text[],
            ${textArrayLiteral(column((e) => e.organizationId))}::text[],
            ${textArrayLiteral(column((e) => e.baseCoinId))}::text[],
            ${textArrayLiteral(column((e) => e.webhookId ?? null))}::uuid[],
            ${textArrayLiteral(column((e) => JSON.stringify(e.data)))}::text[],
            ${textArrayLiteral(column((e) => e.occurredAt.toISOString()))}::timestamptz[],
            ${textArrayLiteral(column((e) => e.dedupKey))}::text[]
          ) as e(id, type, organization_id, base_coin_id, webhook_id, data, occurred_at,
                 dedup_key)
          on conflict (dedup_key) do nothing
          returning id, type, organization_id, base_coin_id, webhook_id, data
        ),
        queued as (
          insert into webhook_deliveries (id, webhook_id, event_id, next_attempt_at, created_at)
          select gen_random_uuid(), w.id, e.id, ${now}, ${now}
          from new_events e
          join webhooks w on not w.disabled and ${endpointSubscribes}
          join organizations o on o.id = w.organization_id
          where ${endpointHears}
          -- Waits for an endpoint being disabled, then sees it disabled (webhook-store update).
          for key share of w
          returning 1
        )
        select (select count(*) from new_events)::int as recorded`.execute(db);
      return result.rows[0]?.recorded ?? 0;
    },
  };
}

export type WebhookEventStore = ReturnType<typeof createWebhookEventStore>;

const OWN_ONLY = WEBHOOK_EVENT_TYPES.filter(isOwnOrganizationOnly);

/**
 * Whether the market maker of event `e` had an engagement for its coin on the event's day (the
 * market day its `data` names): a project reads a market maker's reports of its coins for
 * those dates only (CONTRACT section 4), ended engagements included. Obligation days lie
 * inside an engagement; a report, and so its quality.flagged, may be dated outside any.
 */
const engagedOnTheDay = sql`exists (
    select 1 from engagements g
    where g.organization_id = e.organization_id and g.base_coin_id = e.base_coin_id
      and g.since <= (e.data ->> 'date')::date
      and (g.until is null or g.until >= (e.data ->> 'date')::date))`;

/**
 * Whether endpoint `w` (of organization `o`) may hear of event `e`: its own organization's
 * events, a project's coins for the days its market maker was engaged for them, everything
 * for an operator; an event meant for one endpoint only to it. Decided when the event is queued and again before every attempt, so that an endpoint
 * whose organization lost a coin is sent nothing more about it.
 */
/** Whether endpoint `w` subscribes to event `e`: its type, `*`, or a test sent to it. */
export const endpointSubscribes: RawBuilder<boolean> = sql<boolean>`(e.webhook_id is not null
  or w.events @> array[e.type] or w.events @> array['*'])`;

export const endpointHears: RawBuilder<boolean> = sql<boolean>`case
  when e.webhook_id is not null then w.id = e.webhook_id
  when w.organization_id = e.organization_id then true
  when e.type = any(${textArrayLiteral(OWN_ONLY)}::text[]) then false
  when o.kind = 'operator' then true
  when o.kind = 'project' then exists (
    select 1 from organization_coins c
    where c.organization_id = o.id and c.base_coin_id = e.base_coin_id)
    and ${engagedOnTheDay}
  else false
end`;
