import {
  type ObservedFlags,
  type QualityOutcome,
  qualityEventsOf,
} from "../domain/webhook-quality-rules.js";
import type { Stores } from "../store/stores.js";
import type { TouchedVersion } from "../store/webhook-producer-rows.js";

/** At most this many reports noted by recomputations are judged per pass. */
const CHANGES_PER_PASS = 10_000;

/**
 * The quality.flagged part of a producer pass (in its transaction): judges the flags of the
 * versions the pass read that changed their report's flags (oldest first; see VersionsRead),
 * then the current flags of the reports recomputations changed since the last pass; records
 * the events and keeps the new outcomes. Returns the events recorded and whether noted
 * changes are left for another pass.
 */
export async function announceQuality(
  tx: Stores,
  versions: readonly TouchedVersion[],
  now: Date,
): Promise<{ recorded: number; more: boolean }> {
  const changed = await tx.webhookQuality.takeChanges(CHANGES_PER_PASS);
  const observed = new Map<number, ObservedFlags[]>();
  const observe = (reportId: number, flags: ObservedFlags) => {
    const list = observed.get(reportId);
    if (list === undefined) observed.set(reportId, [flags]);
    else list.push(flags);
  };
  for (const v of versions) observe(v.reportId, { ...v, flags: v.qualityFlags, at: v.recordedAt });
  for (const [reportId, current] of await tx.webhookQuality.currentFlags(changed, now)) {
    observe(reportId, current);
  }
  const previous = await tx.webhookQuality.outcomes([...observed.keys()]);
  const events = [];
  const outcomes = new Map<number, QualityOutcome>();
  for (const [reportId, list] of observed) {
    const judged = qualityEventsOf(list, previous.get(reportId));
    events.push(...judged.events);
    if (judged.outcome !== undefined) outcomes.set(reportId, judged.outcome);
  }
  await tx.webhookQuality.saveOutcomes(outcomes);
  const recorded = await tx.webhookEvents.publish(events, now);
  return { recorded, more: changed.length === CHANGES_PER_PASS };
}
