import { startWebhookDeliveries, type WebhookJob } from "../../src/jobs/webhook-deliveries.js";
import {
  createWebhookEventProducer,
  type WebhookEventProducer,
} from "../../src/jobs/webhook-event-producer.js";
import type { Stores } from "../../src/store/stores.js";

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
