type Entry = { count: number; resetAt: number };

/**
 * Counts events per key in fixed windows (a window starts at a key's first event). Which keys
 * exist is decided by the caller: only values an attacker cannot choose freely (a stored key's
 * id, a client address) are ever counted. The table never evicts a live entry, so no flood of
 * new keys can reset an exhausted one. When it is full, expired entries are swept, at most once
 * per window (a sweep costs the whole table, and an IPv6 /48 alone has 65,536 /64 buckets); a
 * new key that still finds no room is counted in one overflow entry shared by all such keys,
 * with the same limit: past it they are refused, never let through uncounted.
 */
export class WindowCounter {
  private readonly entries = new Map<string, Entry>();
  private overflow: Entry = { count: 0, resetAt: 0 };
  private lastSweepAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  /** Counts one event for `key`; says whether it is within the limit and when the window ends. */
  hit(key: string, now: number): { allowed: boolean; remaining: number; resetAt: number } {
    let entry = this.entries.get(key);
    if (entry === undefined && this.entries.size >= this.maxEntries) {
      if (now - this.lastSweepAt >= this.windowMs) this.sweep(now);
      if (this.entries.size >= this.maxEntries) entry = this.overflowEntry(now);
    }
    if (entry === undefined || entry.resetAt <= now) {
      entry = { count: 0, resetAt: now + this.windowMs };
      this.entries.set(key, entry);
    }
    entry.count++;
    return {
      allowed: entry.count <= this.limit,
      remaining: Math.max(0, this.limit - entry.count),
      resetAt: entry.resetAt,
    };
  }

  /**
   * When `key` has used up its window, `pending` events yet to come counted as if they had
   * happened: the end of that window (`now` when only the pending ones use it up); else
   * undefined. Counts nothing.
   */
  exhaustedUntil(key: string, now: number, pending = 0): number | undefined {
    // A key without an entry of its own shares the overflow entry.
    const entry = this.entries.get(key) ?? this.overflow;
    const count = entry.resetAt > now ? entry.count : 0;
    if (count + pending < this.limit) return undefined;
    return count >= this.limit ? entry.resetAt : now;
  }

  get size(): number {
    return this.entries.size;
  }

  private overflowEntry(now: number): Entry {
    if (this.overflow.resetAt <= now) this.overflow = { count: 0, resetAt: now + this.windowMs };
    return this.overflow;
  }

  private sweep(now: number) {
    this.lastSweepAt = now;
    for (const [key, entry] of this.entries) if (entry.resetAt <= now) this.entries.delete(key);
  }
}
