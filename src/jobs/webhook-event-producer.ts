import { type ProducerOptions, producePass } from "../services/webhook-event-producer.js";
import type { Stores } from "../store/stores.js";

export type WebhookEventProducerOptions = ProducerOptions & {
  /** WEBHOOK_EVENTS_POLL_MS: the pause between passes. */
  pollMs: number;
  now: () => Date;
};

/**
 * The job raising report.missing, report.late and kpi.missed: every `pollMs`, passes until it
 * has caught up (a pass is bounded; see producePass). Every `serve` process runs one; the
 * database lets one pass run at a time, and the cursors it keeps there let any process resume
 * where another stopped, after downtime too.
 */
export function createWebhookEventProducer(stores: Stores, options: WebhookEventProducerOptions) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  // Set by stop(): no new pass starts (a catch-up in progress ends after its current pass).
  let stopping = false;

  /** Passes at `now` until caught up; returns the events recorded (0 while another process works). */
  async function runOnce(now = options.now()): Promise<number> {
    let recorded = 0;
    for (;;) {
      const pass = await producePass(stores, now, options);
      recorded += pass.recorded;
      if (!pass.more || stopping) return recorded;
    }
  }

  return {
    runOnce,

    /** Starts passing every `pollMs`; a failed pass is reported and the next one tried. */
    start(onError: (error: unknown) => void): void {
      stopping = false;
      const tick = () => {
        running = runOnce()
          .catch(onError)
          .finally(() => {
            if (!stopping) timer = setTimeout(tick, options.pollMs).unref();
          });
      };
      tick();
    },

    /** Stops passing; resolves once a pass in progress has ended. */
    async stop(): Promise<void> {
      stopping = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type WebhookEventProducer = ReturnType<typeof createWebhookEventProducer>;
