import { addDays, EARLIEST_DATE } from "../domain/dates.js";
import { lastDueDay } from "../domain/scorecard.js";
import type { MarketDay, WebhookEvent } from "../domain/webhook-event.js";
import {
  eventsOfDay,
  type JudgedDay,
  type KpiOutcome,
  marketDayKey,
  type NotifyingSince,
} from "../domain/webhook-event-rules.js";
import type { DayScorecard } from "../store/scorecard-store.js";
import type { Stores } from "../store/stores.js";
import type { VersionsRead } from "../store/webhook-producer-rows.js";
import type { ChangedPeriod, ProducerState } from "../store/webhook-producer-store.js";
import { announceQuality } from "./webhook-quality-events.js";

export type ProducerOptions = {
  /** REPORT_DEADLINE_UTC (`HH:MM`). */
  deadlineUtc: string;
  /**
   * A day is judged this long after its deadline, not at once: a submission accepted just
   * before the deadline may still be committing (its statement has a timeout of seconds), and
   * the day must not be announced missing while it does.
   */
  graceMs?: number;
};

export const DEFAULT_GRACE_MS = 60_000;
/** At most this much per pass (one transaction); a pass that hit a limit is followed by another. */
const LIMITS = { versions: 5_000, changes: 200, deadlineDays: 31 };

/** Days of one organization and coin (or of every obligation market) to judge. */
type Range = { organizationId?: string; baseCoinId?: string; dateGte: string; dateLte: string };

export type PassResult = {
  /** Another process was making a pass: this one did nothing. */
  busy: boolean;
  /** A limit was hit: more work is waiting. */
  more: boolean;
  /** Events recorded (new ones; repeats are not counted). */
  recorded: number;
};

/**
 * One pass of the producer of report.missing, report.late and kpi.missed (CONTRACT section 7),
 * in one transaction that only one process makes at a time: it judges, as scoring does, the
 * days whose deadline passed since the last pass, the days of the report versions stored
 * since, and the days of the obligation periods and engagements changed since (whatever their
 * date); then records the events those judgements raise (see eventsOfDay: nothing that
 * happened before notifications started) and moves its cursors, all together.
 * The same versions, and the reports recomputations changed, raise quality.flagged (see
 * announceQuality).
 */
export function producePass(stores: Stores, now: Date, options: ProducerOptions) {
  return stores.transaction(async (tx): Promise<PassResult> => {
    const producer = tx.webhookProducer;
    if (!(await producer.tryLock())) return { busy: true, more: false, recorded: 0 };
    const { deadlineUtc } = options;
    const judgedAt = new Date(now.getTime() - (options.graceMs ?? DEFAULT_GRACE_MS));
    // First, before this transaction writes (see versionsToJudge).
    const versions = await producer.versionsToJudge(LIMITS.versions);
    const state = await producer.state({
      startedAt: now,
      firstDay: addDays(lastDueDay(now, deadlineUtc), 1),
    });
    const changes = await producer.takeChanges(LIMITS.changes);
    const lastDue = lastDueDay(judgedAt, deadlineUtc);
    const deadlineCatchUp = addDays(state.deadlinesDone, LIMITS.deadlineDays);
    const deadlinesDone = lastDue < deadlineCatchUp ? lastDue : deadlineCatchUp;
    const earlyDays = await earlyDaysToJudge(tx, { state, versions, changes });
    const ranges = rangesToJudge({ state, versions, earlyDays, changes, deadlinesDone, lastDue });
    const early = new Set(earlyDays.map(marketDayKey));
    const days = await judge(
      tx,
      ranges,
      { now: judgedAt, deadlineUtc },
      (day) => day.date >= state.firstDay || early.has(marketDayKey(day)),
    );
    if (state.firstPass) await tx.webhookQuality.discardChanges();
    const quality = await announceQuality(tx, versions.flagChanges, now);
    const since = { startedAt: state.startedAt, firstDay: state.firstDay };
    const recorded = (await announce(tx, days, { now, deadlineUtc, since })) + quality.recorded;
    await producer.saveProgress({
      deadlinesDone: deadlinesDone > state.deadlinesDone ? deadlinesDone : state.deadlinesDone,
      versionsSeen: versions.last ?? state.versionsSeen,
    });
    const more =
      versions.freshCount === LIMITS.versions ||
      changes.length === LIMITS.changes ||
      quality.more ||
      deadlinesDone < lastDue;
    return { busy: false, more, recorded };
  });
}

/**
 * Of the days before `firstDay` (whose deadlines passed before notifications started), the
 * market-days judged: those of the versions read (`earlyDays`), and in the periods changed,
 * those whose report was stored or corrected since notifications started (its arrival or
 * correction was news, so is a change of its judgement). The other days of a changed period
 * are history nobody was told about: a period set or changed for last year judges none of
 * them.
 */
async function earlyDaysToJudge(
  tx: Stores,
  pass: { state: ProducerState; versions: VersionsRead; changes: readonly ChangedPeriod[] },
): Promise<MarketDay[]> {
  const { state, versions, changes } = pass;
  const dayBefore = addDays(state.firstDay, -1);
  const changedEarly = changes
    .filter((c) => c.since < state.firstDay)
    .map((c) => ({
      organizationId: c.organizationId,
      baseCoinId: c.baseCoinId,
      dateGte: c.since,
      dateLte: c.until !== null && c.until < dayBefore ? c.until : dayBefore,
    }));
  const touched = await tx.webhookProducer.reportedSince(changedEarly, state.startedAt);
  return [...versions.earlyDays, ...touched];
}

/**
 * The days a pass judges, one range per organization and coin: the deadlines passed since the
 * last pass; the days of the versions read and of the periods and engagements changed (never
 * before `firstDay`, the deadlines notifications started after); and before it, the days of
 * `earlyDays` (see earlyDaysToJudge), each alone.
 */
function rangesToJudge(pass: {
  state: ProducerState;
  versions: VersionsRead;
  earlyDays: readonly MarketDay[];
  changes: readonly ChangedPeriod[];
  deadlinesDone: string;
  lastDue: string;
}): Range[] {
  const { state, versions, earlyDays, changes, deadlinesDone, lastDue } = pass;
  const sinceStart = (r: Range) => clip(r, state.firstDay, lastDue);
  return merged([
    ...(deadlinesDone > state.deadlinesDone
      ? [{ dateGte: addDays(state.deadlinesDone, 1), dateLte: deadlinesDone }]
      : []),
    ...versions.ranges.map(sinceStart),
    ...earlyDays.map((d) => ({
      organizationId: d.organizationId,
      baseCoinId: d.baseCoinId,
      dateGte: d.date,
      dateLte: d.date,
    })),
    ...changes.map((c) =>
      sinceStart({
        organizationId: c.organizationId,
        baseCoinId: c.baseCoinId,
        dateGte: c.since,
        dateLte: c.until ?? lastDue,
      }),
    ),
  ])
    .map((r) => clip(r, EARLIEST_DATE, lastDue))
    .filter((r) => r.dateGte <= r.dateLte);
}

/**
 * One range per organization and coin (and the deadlines' range of every one), from the
 * earliest day to the latest: a period's markets, changed row by row, are judged once.
 */
function merged(ranges: readonly Range[]): Range[] {
  const byKey = new Map<string, Range>();
  for (const range of ranges) {
    const key = JSON.stringify([range.organizationId, range.baseCoinId]);
    const known = byKey.get(key);
    if (known === undefined) byKey.set(key, { ...range });
    else {
      if (range.dateGte < known.dateGte) known.dateGte = range.dateGte;
      if (range.dateLte > known.dateLte) known.dateLte = range.dateLte;
    }
  }
  return [...byKey.values()];
}

function clip(range: Range, firstDay: string, lastDay: string): Range {
  return {
    ...range,
    dateGte: range.dateGte < firstDay ? firstDay : range.dateGte,
    dateLte: range.dateLte > lastDay ? lastDay : range.dateLte,
  };
}

/** The due days of the ranges that are `wanted`, each once, judged by the scorecards' own query. */
async function judge(
  tx: Stores,
  ranges: readonly Range[],
  at: { now: Date; deadlineUtc: string },
  wanted: (day: DayScorecard) => boolean,
): Promise<Map<string, DayScorecard>> {
  const days = new Map<string, DayScorecard>();
  for (const range of ranges) {
    const scored = await tx.scorecards.days({ scope: { kind: "all" }, ...range, ...at });
    for (const day of scored) {
      if (day.status !== "pending" && wanted(day)) days.set(marketDayKey(day), day);
    }
  }
  return days;
}

/** Records the events the judged days raise, and keeps their new kpi.missed outcomes. */
async function announce(
  tx: Stores,
  days: Map<string, DayScorecard>,
  at: { now: Date; deadlineUtc: string; since: NotifyingSince },
): Promise<number> {
  const all = [...days.values()];
  const received = await tx.webhookProducer.receivedAt(all.filter((d) => d.late));
  const previous = await tx.webhookProducer.outcomes(all.filter((d) => d.status !== "missing"));
  const events: WebhookEvent[] = [];
  const outcomes: { day: JudgedDay; outcome: KpiOutcome }[] = [];
  for (const [key, scored] of days) {
    const day: JudgedDay = { ...scored, receivedAt: received.get(key) ?? null };
    const judged = eventsOfDay(day, previous.get(key), at);
    events.push(...judged.events);
    if (judged.outcome !== undefined) outcomes.push({ day, outcome: judged.outcome });
  }
  await tx.webhookProducer.saveOutcomes(outcomes);
  return tx.webhookEvents.publish(events, at.now);
}
