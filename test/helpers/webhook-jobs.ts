import { type Kysely, sql } from "kysely";
import { startWebhookDeliveries, type WebhookJob } from "../../src/jobs/webhook-deliveries.js";
import {
  createWebhookEventProducer,
  type WebhookEventProducer,
} from "../../src/jobs/webhook-event-producer.js";
import type { Stores } from "../../src/store/stores.js";
import type { Tables } from "../../src/store/tables.js";

/** The event producer on the test's clock, run by the test (`runOnce`), never by its timer. */
export const testProducer = (stores: Stores, now: () => Date): WebhookEventProducer =>
  createWebhookEventProducer(stores, { deadlineUtc: "12:00", pollMs: 60_000, now });

/** The delivery job as the end-to-end tests run it: quick polls, one retry a second later. */
export const testDeliveries = (stores: Stores): WebhookJob =>
  startWebhookDeliveries(stores, {
    allowInsecure: true,
    timeoutMs: 2_000,
    retrySchedule: [1],
    concurrency: 4,
    pollMs: 50,
  });

/**
 * An enabled endpoint of globex that hears only webhook.test: events are recorded only while
 * some endpoint is enabled, so tests that read webhook_events without subscribing need one.
 */
export async function listenWithAnEndpoint(db: Kysely<Tables>): Promise<void> {
  await sql`insert into webhooks (id, organization_id, url, events, secret)
    values (gen_random_uuid(), 'globex', 'https://globex.example/hook', '{webhook.test}', 'whsec_x')`.execute(
    db,
  );
}
