/** How often `serve` deletes the Idempotency-Keys past retention. */
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 5 * 60_000;

/**
 * Runs `purge` every `intervalMs` (one run at a time) until stopped. A failed run is reported
 * and the next one tries again: an expired key left a while longer changes no answer (a
 * request takes an expired key over), so nothing waits on the purge.
 */
export function startIdempotencyPurge(options: {
  purge: () => Promise<number>;
  intervalMs: number;
  onError: (error: unknown) => void;
}) {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= options
      .purge()
      .then(() => undefined, options.onError)
      .finally(() => {
        running = undefined;
      });
  }, options.intervalMs);
  timer.unref();
  return {
    /** Stops the timer and waits for a run in progress. */
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
    },
  };
}
