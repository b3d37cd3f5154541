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

/**
 * Counters shared by every process on one database (RATE_LIMIT_STORE=database): a limit is
 * the budget of the whole cluster, not of each node. One statement per counted request. When
 * the database does not answer, the request is counted in memory instead (the limit then holds
 * per process, as without a shared store) rather than refused or let through uncounted. Ended
 * windows are deleted by each process at most once per window.
 */
export function sharedCounters(windows: SharedWindows): RateCounters {
  let sweptAt = Date.now();
  return (name, limit, windowMs) => {
    const local = localCounters(name, limit, windowMs);
    return {
      limit,
      async hit(key) {
        if (Date.now() - sweptAt >= windowMs) {
          sweptAt = Date.now();
          windows.sweep().catch(() => {});
        }
        const window = await windows.hit(name, key, windowMs).catch(() => undefined);
        if (window === undefined) return local.hit(key);
        return {
          allowed: window.count <= limit,
          remaining: Math.max(0, limit - window.count),
          retryInMs: window.resetsInMs,
        };
      },
      async exhaustedFor(key, pending = 0) {
        const window = await windows.peek(name, key).catch(() => null);
        if (window === null) return local.exhaustedFor(key, pending);
        const count = window?.count ?? 0;
        if (count + pending < limit) return undefined;
        return count >= limit && window !== undefined ? window.resetsInMs : 0;
      },
    };
  };
}
