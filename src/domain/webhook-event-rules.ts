import { type DayStatus, deadlineOf, type KpiName } from "./obligation.js";
import type { MarketDay, WebhookEvent } from "./webhook-event.js";

/**
 * When report.missing, report.late and kpi.missed are raised (CONTRACT section 7), from one
 * obligation market's day as scoring judges it (CONTRACT section 4). The same day may be
 * judged many times (at its deadline, on each version of its report, on each change of its
 * obligation): what is sent depends only on the day and on what was sent before, so judging
 * it again sends nothing new.
 */
export type JudgedDay = MarketDay & {
  status: DayStatus;
  late: boolean;
  failedKpis: KpiName[];
  /** When the report's first version was accepted; null without a report. */
  receivedAt: Date | null;
};

/**
 * The last kpi.missed outcome of a day: the failed KPIs last announced (empty once the day
 * was judged met again) and how many kpi.missed were sent for it.
 */
export type KpiOutcome = { failedKpis: readonly string[]; announced: number };

/** The market and day as one string: the identity of a day's events. */
export function marketDayKey(d: MarketDay): string {
  return JSON.stringify([
    d.organizationId,
    d.baseCoinId,
    d.exchangeId,
    d.quote,
    d.instrumentType,
    d.date,
  ]);
}

/** The payload's market fields, in the order CONTRACT section 7 lists them. */
export function marketDayOf(d: MarketDay): MarketDay {
  return {
    organizationId: d.organizationId,
    baseCoinId: d.baseCoinId,
    exchangeId: d.exchangeId,
    quote: d.quote,
    instrumentType: d.instrumentType,
    date: d.date,
  };
}

const sameKpis = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((kpi, i) => kpi === b[i]);

/**
 * When notifications first ran (the producer's first pass): `startedAt`, and `firstDay`, the
 * first day whose deadline had not passed then. Nothing that happened before is announced: a
 * deadline that passed before (report.missing, as CONTRACT section 7 says), a report that
 * arrived late before (report.late). A judgement made since is news whatever the day: a late
 * report arriving now for a day of last month, its kpi.missed, a correction's.
 */
export type NotifyingSince = { startedAt: Date; firstDay: string };

/**
 * The events a judged day raises and the kpi.missed outcome to keep (undefined: unchanged).
 * - report.missing: the deadline passed with no report, that is no report at all or one
 *   whose first version came after it (the day was missing at its deadline, whenever it is
 *   judged). Once per market and day; only for deadlines since notifications started.
 * - report.late: the first version came after the deadline. Once per market and day; only for
 *   a first version accepted since notifications started.
 * - kpi.missed: the day is scored `missed` with failed KPIs other than those last announced.
 *   A day judged `met` in between forgets them: missing the same KPIs again is news.
 */
export function eventsOfDay(
  day: JudgedDay,
  previous: KpiOutcome | undefined,
  options: { deadlineUtc: string; now: Date; since: NotifyingSince },
): { events: WebhookEvent[]; outcome: KpiOutcome | undefined } {
  if (day.status === "pending") return { events: [], outcome: undefined };
  const deadline = deadlineOf(day.date, options.deadlineUtc);
  const key = marketDayKey(day);
  const market = marketDayOf(day);
  const about = { organizationId: day.organizationId, baseCoinId: day.baseCoinId };
  const events: WebhookEvent[] = [];
  const { startedAt, firstDay } = options.since;
  if ((day.status === "missing" || day.late) && day.date >= firstDay) {
    events.push({
      type: "report.missing",
      data: { ...market, deadline: deadline.toISOString() },
      ...about,
      occurredAt: deadline,
      dedupKey: `report.missing:${key}`,
    });
  }
  if (day.late && day.receivedAt !== null && day.receivedAt >= startedAt) {
    events.push({
      type: "report.late",
      data: {
        ...market,
        deadline: deadline.toISOString(),
        receivedAt: day.receivedAt.toISOString(),
      },
      ...about,
      occurredAt: day.receivedAt,
      dedupKey: `report.late:${key}`,
    });
  }
  const outcome = nextKpiOutcome(day, previous);
  if (outcome !== undefined && outcome.announced > (previous?.announced ?? 0)) {
    events.push({
      type: "kpi.missed",
      data: { ...market, failedKpis: [...day.failedKpis], late: day.late },
      ...about,
      occurredAt: options.now,
      dedupKey: `kpi.missed:${key}:${outcome.announced}`,
    });
  }
  return { events, outcome };
}

/** The outcome to keep after judging the day, or undefined when it stays as it was. */
function nextKpiOutcome(day: JudgedDay, previous: KpiOutcome | undefined): KpiOutcome | undefined {
  const announced = previous?.announced ?? 0;
  if (day.status === "met") {
    return previous !== undefined && previous.failedKpis.length > 0
      ? { failedKpis: [], announced }
      : undefined;
  }
  if (day.status !== "missed") return undefined;
  if (previous !== undefined && sameKpis(previous.failedKpis, day.failedKpis)) return undefined;
  return { failedKpis: [...day.failedKpis], announced: announced + 1 };
}
