/** The dates of an engagement: inclusive, `until` null when open-ended. */
export type EngagementPeriod = { baseCoinId: string; since: string; until: string | null };

/**
 * One organization has at most one engagement for a coin on any day: otherwise a report's
 * `type` and the projects listing would depend on which engagement one picked. An engagement
 * is identified by organization, coin and `since` (loading it again updates it), so two
 * periods of one coin with the same `since` are the same engagement, not an overlap.
 */
export function overlaps(a: EngagementPeriod, b: EngagementPeriod): boolean {
  if (a.baseCoinId !== b.baseCoinId || a.since === b.since) return false;
  return a.since <= (b.until ?? "9999-12-31") && b.since <= (a.until ?? "9999-12-31");
}

export function describePeriod(e: EngagementPeriod): string {
  return `engagement for '${e.baseCoinId}' from ${e.since} to ${e.until ?? "open end"}`;
}
