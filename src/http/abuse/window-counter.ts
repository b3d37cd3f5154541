/**
 * Counts events per key in fixed windows (a window starts at a key's first event). Which keys
 * exist is decided by the caller: only values an attacker cannot choose freely (a stored key's
 * id, a client address) are ever counted. The table never evicts a live entry, so no flood of
 * new keys can reset an exhausted one; when it is full, expired entries are swept and, if
 * still full, a new key is not tracked (it is let through, as a fresh entry would be).
 */
export class WindowCounter {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();

  constructor(
    readonly limit: number,
    private readonly windowMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  /** Counts one event for `key`; says whether it is within the limit and when the window ends. */
  hit(key: string, now: number): { allowed: boolean; remaining: number; resetAt: number } {
    let entry = this.entries.get(key);
    if (entry === undefined || entry.resetAt <= now) {
      if (entry === undefined && this.entries.size >= this.maxEntries) this.sweep(now);
      if (entry === undefined && this.entries.size >= this.maxEntries) {
        return { allowed: true, remaining: this.limit - 1, resetAt: now + this.windowMs };
      }
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

  /** When `key` has used up its window: the end of that window; else undefined. Counts nothing. */
  exhaustedUntil(key: string, now: number): number | undefined {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.resetAt > now && entry.count >= this.limit
      ? entry.resetAt
      : undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  private sweep(now: number) {
    for (const [key, entry] of this.entries) if (entry.resetAt <= now) this.entries.delete(key);
  }
}
