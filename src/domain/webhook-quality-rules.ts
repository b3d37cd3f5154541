import { qualityFlagsOf } from "./quality.js";
import type { MarketDay, WebhookEvent } from "./webhook-event.js";
import { marketDayKey, marketDayOf } from "./webhook-event-rules.js";

/**
 * When quality.flagged is raised (CONTRACT section 7): a report's flags (section 6) gain a
 * flag they did not have when last judged, whether a stored version brought it (arrival or
 * correction) or a later public depth snapshot did (recomputation). What is sent depends only
 * on the flags seen and on the outcome kept, so judging the same flags again sends nothing.
 */
export type ObservedFlags = MarketDay & {
  /** The flags (bitmask, src/domain/quality.ts) the report had at that moment. */
  flags: number;
  /** When it had them: a version's time stored, or when a recomputation was judged. */
  at: Date;
};

/**
 * What was last judged of a report: its flags then (a flag lost since is news again once
 * regained) and how many quality.flagged were sent for it (the next one's dedup key).
 */
export type QualityOutcome = { flags: number; announced: number };

/**
 * The events of one report's observations (oldest first) and the outcome to keep (undefined:
 * unchanged). A report never judged had no flags: its first flagged observation is news.
 */
export function qualityEventsOf(
  observed: readonly ObservedFlags[],
  previous: QualityOutcome | undefined,
): { events: WebhookEvent[]; outcome: QualityOutcome | undefined } {
  let flags = previous?.flags ?? 0;
  let announced = previous?.announced ?? 0;
  const events: WebhookEvent[] = [];
  for (const seen of observed) {
    if ((seen.flags & ~flags) !== 0) {
      announced++;
      events.push({
        type: "quality.flagged",
        data: { ...marketDayOf(seen), flags: qualityFlagsOf(seen.flags) },
        organizationId: seen.organizationId,
        baseCoinId: seen.baseCoinId,
        occurredAt: seen.at,
        dedupKey: `quality.flagged:${marketDayKey(seen)}:${announced}`,
      });
    }
    flags = seen.flags;
  }
  const unchanged = flags === (previous?.flags ?? 0) && announced === (previous?.announced ?? 0);
  return { events, outcome: unchanged ? undefined : { flags, announced } };
}
