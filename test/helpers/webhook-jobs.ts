import { type Kysely, sql } from "kysely";
import { startWebhookDeliveries, type WebhookJob } from "../../src/jobs/webhook-deliveries.js";
import {
  createWebhookEventProducer,
  type WebhookEventProducer,
} from "../../src/jobs/webhook-event-producer.js";
import type { Stores } from "../../src/store/stores.js";
import type { Tables } from "../../src/store/tables.js";
import { accountabilityFixture } from "./accountability.js";
import { startTestApp } from "./app.js";
import { KEYS } from "./fixture.js";
import { startReceiver } from "./webhook-receiver.js";

/** The event producer on the test's clock, run by the test (`runOnce`), never by its timer. */
export const testProducer = (stores: Stores, now: () => Date): WebhookEventProducer =>
  createWebhookEventProducer(stores, { deadlineUtc: "12:00", pollMs: 60_000, now });

/** The delivery job as the end-to-end tests run it: quick polls, one retry a second later. */
export const testDeliveries = (stores: Stores, retrySchedule: number[] = [1]): WebhookJob =>
  startWebhookDeliveries(stores, {
    allowInsecure: true,
    timeoutMs: 2_000,
    retrySchedule,
    concurrency: 4,
    pollMs: 50,
  });

/**
 * The accountability world with a loopback receiver and the delivery job running, and a way
 * to subscribe an endpoint of the receiver (answer: its id and secret).
 */
export async function deliveryWorld(options: { now?: () => Date; retrySchedule?: number[] } = {}) {
  const t = await startTestApp({
    fixture: accountabilityFixture(),
    env: { WEBHOOK_ALLOW_INSECURE: "true" },
    now: options.now,
  });
  const receiver = await startReceiver();
  const job = testDeliveries(t.database.stores, options.retrySchedule);
  return {
    t,
    receiver,
    async subscribe(path: string, key: string = KEYS.acme) {
      const response = await t.request({
        method: "POST",
        url: "/api/v1/webhooks",
        key,
        payload: { url: receiver.url(path), events: ["*"] },
      });
      if (response.statusCode !== 201) throw new Error(`subscribe: ${response.body}`);
      return response.json() as { id: string; secret: string };
    },
    async close() {
      await job.stop();
      await receiver.close();
      await t.close();
    },
  };
}

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
