import {
  createWebhookSender,
  type TargetPolicy,
  type WebhookSender,
} from "../adapters/webhook-http.js";
import {
  DISABLE_AFTER_FAILING_MS,
  nextAttemptAt,
  signWebhook,
  succeeded,
  webhookBody,
} from "../domain/webhook.js";
import type { Stores } from "../store/stores.js";
import type { ClaimedDelivery } from "../store/webhook-delivery-store.js";

export type WebhookJobOptions = TargetPolicy & {
  timeoutMs: number;
  retrySchedule: readonly number[];
  /** Attempts made at once by this process. */
  concurrency: number;
  /** How often the queue is looked at when nothing is due. */
  pollMs?: number;
  now?: () => Date;
  /** Where a failure of the job itself (not of an attempt) is told. */
  onError?: (error: unknown) => void;
};

const DEFAULT_POLL_MS = 1_000;
/** An attempt's lease outlasts its timeout by this: a killed process's claim ends then. */
const LEASE_MARGIN_MS = 5_000;

/**
 * The delivery job of `serve` (CONTRACT section 7): takes due deliveries from the database
 * (several processes share the queue; each attempt is made by one), makes at most
 * `concurrency` attempts at once, and records each outcome with its next attempt. No database
 * transaction is open while a receiver answers. `stop` waits for the attempts in flight.
 */
export function startWebhookDeliveries(stores: Stores, options: WebhookJobOptions) {
  const now = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const sender = createWebhookSender(options);
  const inFlight = new Set<Promise<void>>();
  // A slow endpoint gets at most a quarter of the slots (2 at least): the others' go on.
  const perEndpointCap = Math.max(2, Math.ceil(options.concurrency / 4));
  const perEndpoint = new Map<string, number>();
  let stopped = false;
  let wake: () => void = () => {};

  const start = (delivery: ClaimedDelivery) => {
    const endpoint = delivery.webhookId;
    tally(perEndpoint, endpoint, 1);
    const running: Promise<void> = attempt(stores, sender, options, delivery)
      // Not recorded (the database is away): the lease ends and the attempt is made again.
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        tally(perEndpoint, endpoint, -1);
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
  };

  const loop = async () => {
    while (!stopped) {
      const free = options.concurrency - inFlight.size;
      let claimed: ClaimedDelivery[] = [];
      if (free > 0) {
        const at = now();
        const leaseUntil = new Date(at.getTime() + options.timeoutMs + LEASE_MARGIN_MS);
        const busy = [...perEndpoint].filter(([, n]) => n >= perEndpointCap).map(([id]) => id);
        // One at a time, so that the per-endpoint cap holds within a claim too.
        claimed = await stores.webhookDeliveries
          .claim(at, 1, leaseUntil, busy)
          .catch((error: unknown) => {
            options.onError?.(error);
            return [];
          });
        for (const delivery of claimed) start(delivery);
      }
      // One taken: more may be due at once; else wait for a free slot or the next poll.
      if (claimed.length > 0) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };

  const running = loop();
  return {
    /** Looks at the queue now (something was just queued). */
    wake: () => wake(),
    async stop() {
      stopped = true;
      wake();
      await running;
      await Promise.all([...inFlight]);
      await sender.close();
    },
  };
}

export type WebhookJob = ReturnType<typeof startWebhookDeliveries>;

function tally(counts: Map<string, number>, key: string, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
}

/** One attempt: signed, sent, recorded with its next attempt (or its end). */
async function attempt(
  stores: Stores,
  sender: WebhookSender,
  options: WebhookJobOptions,
  delivery: ClaimedDelivery,
): Promise<void> {
  const now = options.now ?? (() => new Date());
  const timestamp = Math.floor(now().getTime() / 1000);
  const body = webhookBody(delivery.type, delivery.occurredAt, delivery.dataJson);
  const outcome = await sender.send(
    delivery.url,
    {
      "webhook-id": delivery.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signWebhook(delivery.secret, delivery.id, timestamp, body),
    },
    body,
  );
  const at = now();
  const ok = succeeded(outcome);
  const recorded = await stores.webhookDeliveries.record({
    id: delivery.id,
    attemptsBefore: delivery.attempts,
    at,
    ...outcome,
    succeeded: ok,
    nextAttemptAt: ok ? null : nextAttemptAt(options.retrySchedule, delivery.attempts + 1, at),
    disableIfFailingSince: new Date(at.getTime() - DISABLE_AFTER_FAILING_MS),
  });
  if (recorded?.disabled)
    await stores.webhooks.failPending(
      recorded.webhookId,
      "not sent: the webhook was disabled after failing for 5 days",
    );
}
