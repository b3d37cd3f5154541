/** A job failing every few seconds through an outage is logged once a minute, with a count. */
export const JOB_ERROR_LOG_EVERY_MS = 60_000;

/** How often `serve` deletes the Idempotency-Keys past retention. */
export const IDEMPOTENCY_PURGE_INTERVAL_MS = 5 * 60_000;

/**
 * How often `serve` folds the batches' month-count deltas into the listing's month counts.
 * The listing sums the deltas not yet folded too, so this decides only how many it sums: at
 * full ingest speed about one batch row per 6 ms, so a few dozen.
 */
export const MONTH_COUNT_COMPACTION_INTERVAL_MS = 500;

/**
 * Runs `run` every `intervalMs` (one run at a time) until stopped. A failed run is reported
 * and the next one tries again: the jobs run this way (the Idempotency-Key purge, the
 * month-count compaction) change no answer by running late, so nothing waits on them.
 */
export function startPeriodicJob(options: {
  run: () => Promise<unknown>;
  intervalMs: number;
  onError: (error: unknown) => void;
}) {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= options
      .run()
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
