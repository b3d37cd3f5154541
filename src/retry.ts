/**
 * The one retry loop, back-off and `Retry-After` reading, shared by the outgoing adapters
 * (CoinGecko, the submit client) and the store's transaction retries. p-retry was the library
 * choice, but its current majors need Node 22 (README, Decisions).
 */

// The reading of `Retry-After` is pure, so the domain (webhook deliveries) uses it too.
export { retryAfterMs } from "./domain/retry-after.js";

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Exponential back-off: `baseMs` before the first retry, doubling, never above `capMs`. */
export function backoffMs(retry: number, limits: { baseMs: number; capMs: number }): number {
  return Math.min(limits.capMs, limits.baseMs * 2 ** (retry - 1));
}

export type RetryPolicy<T> = {
  /** Retries after the first attempt. */
  retries: number;
  /** The wait before retry number `retry` (1-based) after `outcome`; undefined: final. */
  delayMs(outcome: T, retry: number): number | undefined;
  onRetry?(outcome: T, retry: number, delayMs: number): void;
  sleep?: (ms: number) => Promise<void>;
};

/**
 * Runs `attempt` until its outcome is final or the retries are spent, and returns the last
 * outcome with the number of attempts made. Errors are outcomes too: wrap with `settled`.
 */
export async function retrying<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy<T>,
): Promise<{ outcome: T; attempts: number }> {
  for (let attempts = 1; ; attempts++) {
    const outcome = await attempt();
    const delay = attempts > policy.retries ? undefined : policy.delayMs(outcome, attempts);
    if (delay === undefined) return { outcome, attempts };
    policy.onRetry?.(outcome, attempts, delay);
    await (policy.sleep ?? sleep)(delay);
  }
}

export type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** `work`'s value or thrown error, as an outcome `retrying` can judge. */
export async function settled<T>(work: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * `work`'s outcome, or `late()`'s once `ms` have passed first (`work` goes on, unheeded): a
 * bound on a dependency that hangs rather than refuses.
 */
export function within<T>(work: Promise<T>, ms: number, late: () => T | Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const lateAnswer = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(Promise.resolve().then(late)), ms);
  });
  return Promise.race([work, lateAnswer]).finally(() => clearTimeout(timer));
}
