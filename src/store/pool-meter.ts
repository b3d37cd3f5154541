/** What the connection pool holds and how long callers waited for it (read by the metrics). */
export type PoolStats = {
  /** The most connections the pool opens (PGlite: one). */
  max: number;
  /** Connections open, and of those the ones no query holds. */
  total: number;
  idle: number;
  /** Callers waiting for a connection right now. */
  waiting: number;
  /** Connections handed out since start, and the seconds callers spent waiting for them. */
  acquired: number;
  waitSeconds: number;
};

/**
 * Counts the hand-outs of a pool and the time spent waiting for them: two additions per
 * query, so that the wait is exact (a sampled gauge of waiting callers misses short waits).
 */
export class PoolMeter {
  acquired = 0;
  waitSeconds = 0;
  /** Acquisitions begun and not yet ended. */
  pending = 0;

  async time<T>(acquisition: () => Promise<T>): Promise<T> {
    const started = performance.now();
    this.pending++;
    try {
      return await acquisition();
    } finally {
      this.pending--;
      this.acquired++;
      this.waitSeconds += (performance.now() - started) / 1000;
    }
  }
}
