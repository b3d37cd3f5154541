import {
  createWebhookSender,
  type TargetPolicy,
  type WebhookSender,
} from "../adapters/webhook-http.js";
import {
  type AttemptOutcome,
  DISABLE_AFTER_FAILING_MS,
  DISABLED_NOT_SENT,
  nextAttemptAt,
  postponedBy,
  signatureHeader,
  succeeded,
  webhookBody,
} from "../domain/webhook.js";
import type { Stores } from "../store/stores.js";
import type { ClaimShares } from "../store/webhook-claim-picks.js";
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

/** An attempt made, waiting to be recorded. */
type Finished = { delivery: ClaimedDelivery; outcome: AttemptOutcome; at: Date };

const DEFAULT_POLL_MS = 1_000;
/** An attempt's lease outlasts its timeout by this: a killed process's claim ends then. */
const LEASE_MARGIN_MS = 5_000;
/**
 * Turns of the job are at least this far apart: attempts ending close together are recorded,
 * and their slots refilled, in one transaction (one commit) instead of one each.
 */
const MIN_TURN_MS = 50;

/**
 * The delivery job of `serve` (CONTRACT section 7): takes due deliveries from the database
 * (several processes share the queue; each attempt is made by one), makes at most
 * `concurrency` attempts at once, shared out by sharesOf. Its database work is done in turns,
 * one short transaction each (the outcomes of the attempts that ended, then a claim for the
 * free slots), so that it uses one connection of the pool at a time and never while a
 * receiver answers. `stop` waits for the
 * attempts in flight and records them.
 */
export function startWebhookDeliveries(stores: Stores, options: WebhookJobOptions) {
  const now = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const sender = createWebhookSender(options);
  const shares = sharesOf(options.concurrency);
  const inFlight = new Set<Promise<void>>();
  const finished: Finished[] = [];
  let stopped = false;
  const { wake, wait } = waker(pollMs);

  const start = (delivery: ClaimedDelivery) => {
    const running: Promise<void> = send(sender, delivery, now)
      .then((result) => {
        finished.push(result);
      })
      .finally(() => {
        inFlight.delete(running);
        wake();
      });
    inFlight.add(running);
  };

  /** One turn: records what ended and, unless stopping, claims deliveries for the free slots. */
  const turn = async (claim: boolean) => {
    const free = claim ? options.concurrency - inFlight.size : 0;
    const outcomes = finished.splice(0);
    if (outcomes.length === 0 && free <= 0) return;
    const at = now();
    const leaseUntil = new Date(at.getTime() + options.timeoutMs + LEASE_MARGIN_MS);
    try {
      const claimed = await stores.transaction(async (tx) => {
        await recordAll(tx, options, outcomes);
        return free > 0 ? tx.webhookDeliveries.claim(at, free, leaseUntil, shares) : [];
      });
      for (const delivery of claimed) start(delivery);
    } catch (error) {
      // Kept for the next turn (the database is away); past their lease they are sent again.
      finished.unshift(...outcomes);
      options.onError?.(error);
    }
  };

  const loop = async () => {
    while (!stopped) {
      const began = Date.now();
      await turn(true);
      await wait();
      const early = MIN_TURN_MS - (Date.now() - began);
      if (early > 0 && !stopped) await new Promise((resolve) => setTimeout(resolve, early));
    }
  };

  const running = loop();
  return {
    /** Looks at the queue now (something was just queued). */
    wake,
    async stop() {
      stopped = true;
      wake();
      await running;
      await Promise.all([...inFlight]);
      await turn(false);
      await sender.close();
    },
  };
}

export type WebhookJob = ReturnType<typeof startWebhookDeliveries>;

/**
 * Fair shares of a process's `concurrency` slots, so that hanging receivers hold up only their
 * own organization: one endpoint gets at most a quarter of them (2 at least) and one
 * organization at most half (as many as an endpoint at least), each over all processes; a
 * quarter of the slots (1 at least, from 2 slots) is kept for organizations with no attempt
 * in flight anywhere.
 */
function sharesOf(concurrency: number): ClaimShares {
  const perEndpoint = Math.max(2, Math.ceil(concurrency / 4));
  return {
    perEndpoint,
    perOrganization: Math.max(perEndpoint, Math.ceil(concurrency / 2)),
    reserved: concurrency < 2 ? 0 : Math.max(1, Math.floor(concurrency / 4)),
  };
}

/**
 * `wait` ends after `pollMs` or at a `wake`; a wake that came while nobody waited ends the
 * next wait at once (an attempt that ended during a turn is not left for the next poll).
 */
function waker(pollMs: number) {
  let woken = false;
  let endWait: () => void = () => {};
  return {
    wake() {
      woken = true;
      endWait();
    },
    async wait() {
      if (!woken)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, pollMs);
          endWait = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      woken = false;
      endWait = () => {};
    },
  };
}

/** One attempt, signed and sent (never throws: a failure is its outcome). */
async function send(
  sender: WebhookSender,
  delivery: ClaimedDelivery,
  now: () => Date,
): Promise<Finished> {
  const at = now();
  const timestamp = Math.floor(at.getTime() / 1000);
  const body = webhookBody(delivery.type, delivery.occurredAt, delivery.dataJson);
  const outcome = await sender.send(
    delivery.url,
    {
      "webhook-id": delivery.id,
      "webhook-timestamp": String(timestamp),
      "webhook-signature": signatureHeader(delivery, at, delivery.id, timestamp, body),
    },
    body,
  );
  return { delivery, outcome, at: now() };
}

/**
 * Records attempts with their next attempt (or their end), in endpoint order (two processes
 * recording in one order cannot deadlock on the endpoints' rows), and fails the pending
 * deliveries of an endpoint an attempt disabled.
 */
async function recordAll(stores: Stores, options: WebhookJobOptions, attempts: Finished[]) {
  const ordered = [...attempts].sort(
    (a, b) =>
      a.delivery.webhookId.localeCompare(b.delivery.webhookId) || a.at.getTime() - b.at.getTime(),
  );
  for (const { delivery, outcome, at } of ordered) {
    const ok = succeeded(outcome);
    const recorded = await stores.webhookDeliveries.record({
      id: delivery.id,
      attemptsBefore: delivery.attempts,
      at,
      ...outcome,
      succeeded: ok,
      nextAttemptAt: ok ? null : nextAfter(options.retrySchedule, delivery, at, outcome),
      manual: delivery.finalAttempt || delivery.resumeAt !== null,
      disableIfFailingSince: new Date(at.getTime() - DISABLE_AFTER_FAILING_MS),
    });
    if (recorded?.disabled)
      await stores.webhooks.failPending(
        recorded.webhookId,
        `${DISABLED_NOT_SENT} after failing for 5 days`,
        { id: delivery.id, disabledBy: "the webhook was disabled after failing for 5 days" },
      );
  }
}

/**
 * The next attempt after a failed one: none after a manual retry of a failed or succeeded
 * delivery; the scheduled time it had after a manual retry of a pending one; else the retry
 * schedule's next delay, counting the scheduled attempts only. A receiver's Retry-After (429,
 * 503) puts it off to then when that is later, adding no attempt.
 */
function nextAfter(
  schedule: readonly number[],
  delivery: ClaimedDelivery,
  at: Date,
  outcome: AttemptOutcome,
) {
  if (delivery.finalAttempt) return null;
  const scheduled =
    delivery.resumeAt ??
    nextAttemptAt(schedule, delivery.attempts - delivery.manualAttempts + 1, at);
  return postponedBy(scheduled, at, outcome.retryAfterSeconds);
}
