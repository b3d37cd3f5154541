import { within } from "../../retry.js";
import { WindowCounter } from "./window-counter.js";

/** One counted request: within the limit or not, what is left, when the window ends. */
export type RateHit = { allowed: boolean; remaining: number; retryInMs: number };

/** A fixed-window limit on requests per budget key (see window-counter.ts). */
export type RateCounter = {
  readonly limit: number;
  hit(key: string): Promise<RateHit>;
  /**
   * When `key` has used up its window, with `pending` hits yet to come counted (default 0):
   * milliseconds until it ends (0 when only the pending hits use it up); else undefined.
   */
  exhaustedFor(key: string, pending?: number): Promise<number | undefined>;
};

/** Makes the counter of one named limit. */
export type RateCounters = (name: string, limit: number, windowMs: number) => RateCounter;

/** Per process, in memory (the default: one process, or limits per node). */
export const localCounters: RateCounters = (_name, limit, windowMs) => {
  const counter = new WindowCounter(limit, windowMs);
  return {
    limit,
    async hit(key) {
      const now = Date.now();
      const hit = counter.hit(key, now);
      return { allowed: hit.allowed, remaining: hit.remaining, retryInMs: hit.resetAt - now };
    },
    async exhaustedFor(key, pending = 0) {
      const now = Date.now();
      const until = counter.exhaustedUntil(key, now, pending);
      return until === undefined ? undefined : until - now;
    },
  };
};

/** What shared counters need of the database (store/rate-limit-store.ts). */
export type SharedWindows = {
  hit(name: string, key: string, windowMs: number): Promise<{ count: number; resetsInMs: number }>;
  peek(name: string, key: string): Promise<{ count: number; resetsInMs: number } | undefined>;
  sweep(): Promise<number>;
};

/** How long a store that failed must answer without failing again to be reported back. */
export const REACHABLE_AGAIN_AFTER_MS = 30_000;

/**
 * How long a request waits for the shared store. A store that hangs (a frozen database, not a
 * refusing one) would hold every request for its statement timeout, and then again for the
 * request's own work: 32 s where the documented bound is 16 (review of availability).
 */
const SHARED_STORE_WAIT_MS = 1_000;

const answeredWithin = <T>(work: Promise<T>) =>
  within(work, SHARED_STORE_WAIT_MS, () => {
    throw new Error(`no answer within ${SHARED_STORE_WAIT_MS} ms`);
  });

/**
 * Told when the shared store stops answering (with the first error) and when it answers again:
 * meanwhile the limits hold per process, which an operator must hear of (serve logs it).
 */
export type StoreReachability = { listener?: (reachable: boolean, error?: unknown) => void };

/**
 * Counters shared by every process on one store (RATE_LIMIT_STORE=database or redis): a limit
 * is the budget of the whole cluster, not of each node. One call per counted request. When
 * the store does not answer (within SHARED_STORE_WAIT_MS), the request is counted in memory
 * instead (the limit then holds per process, as without a shared store) rather than refused
 * or let through uncounted. Ended windows are deleted by each process at most once per window.
 */
export function sharedCounters(
  windows: SharedWindows,
  reachability: StoreReachability = {},
): RateCounters {
  let sweptAt = Date.now();
  // Answering again means a whole quiet period without a failure: a store failing now and
  // then is reported once, not at every request that happens to get through.
  let reachable = true;
  let failedAt = 0;
  const answered = <T>(value: T): T => {
    if (!reachable && Date.now() - failedAt >= REACHABLE_AGAIN_AFTER_MS) {
      reachable = true;
      reachability.listener?.(true);
    }
    return value;
  };
  const failed = (error: unknown) => {
    failedAt = Date.now();
    if (reachable) {
      reachable = false;
      reachability.listener?.(false, error);
    }
  };
  return (name, limit, windowMs) => {
    const local = localCounters(name, limit, windowMs);
    return {
      limit,
      async hit(key) {
        if (Date.now() - sweptAt >= windowMs) {
          sweptAt = Date.now();
          windows.sweep().catch(() => {});
        }
        const window = await answeredWithin(windows.hit(name, key, windowMs)).then(
          answered,
          failed,
        );
        if (window === undefined) return local.hit(key);
        return {
          allowed: window.count <= limit,
          remaining: Math.max(0, limit - window.count),
          retryInMs: window.resetsInMs,
        };
      },
      async exhaustedFor(key, pending = 0) {
        const window = await answeredWithin(windows.peek(name, key)).then(
          answered,
          (error: unknown) => {
            failed(error);
            return null;
          },
        );
        if (window === null) return local.exhaustedFor(key, pending);
        const count = window?.count ?? 0;
        if (count + pending < limit) return undefined;
        return count >= limit && window !== undefined ? window.resetsInMs : 0;
      },
    };
  };
}
