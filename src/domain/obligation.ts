import { addDays } from "./dates.js";
import type { InstrumentType, Metric } from "./report.js";

/** Depth bands of the KPIs, as the metric names spell them. */
const DEPTH_BANDS = ["Tob", "10", "25", "50", "100", "200"] as const;

type Bound = "min" | "max";
type KpiDefinition = { metric: Metric; bound: Bound };

/**
 * Every KPI an obligation period may set (CONTRACT section 4), the metric it judges and how:
 * a `min` KPI is met by a value >= the threshold, a `max` KPI by a value <= it. A null value
 * (a metric a v1 report does not carry) misses it. The one list: schemas, storage and scoring
 * all derive from it.
 */
export const KPIS = {
  ...Object.fromEntries(
    DEPTH_BANDS.flatMap((band) => [
      [`minBidDepth${band}`, { metric: `bidDepth${band}`, bound: "min" }],
      [`minAskDepth${band}`, { metric: `askDepth${band}`, bound: "min" }],
    ]),
  ),
  maxBidAskSpread: { metric: "bidAskSpread", bound: "max" },
  minTopOfBookPercentage: { metric: "topOfBookPercentage", bound: "min" },
  minOrderFillVolumeMaker: { metric: "orderFillVolumeMaker", bound: "min" },
} as Record<KpiName, KpiDefinition>;

export type KpiName =
  | `minBidDepth${(typeof DEPTH_BANDS)[number]}`
  | `minAskDepth${(typeof DEPTH_BANDS)[number]}`
  | "maxBidAskSpread"
  | "minTopOfBookPercentage"
  | "minOrderFillVolumeMaker";

export const KPI_NAMES = Object.keys(KPIS) as KpiName[];

export type Kpis = Partial<Record<KpiName, number>>;

/** Whether a report's value meets one KPI's threshold. */
export function meetsKpi(kpi: KpiName, value: number | null, threshold: number): boolean {
  if (value === null) return false;
  return KPIS[kpi].bound === "min" ? value >= threshold : value <= threshold;
}

/** The KPIs of `kpis` a report's values fail, in KPI_NAMES order. */
export function failedKpis(kpis: Kpis, values: Partial<Record<Metric, number | null>>): KpiName[] {
  return KPI_NAMES.filter((kpi) => {
    const threshold = kpis[kpi];
    return threshold !== undefined && !meetsKpi(kpi, values[KPIS[kpi].metric] ?? null, threshold);
  });
}

/** A market to be reported every day, named as reports are stored (after routing). */
export type ObligationMarket = {
  exchangeId: string;
  quote: string;
  instrumentType: InstrumentType;
};

/** One period of what a market maker owes for a coin; dates inclusive, `until` null: open. */
export type ObligationPeriod = {
  organizationId: string;
  baseCoinId: string;
  since: string;
  until: string | null;
  markets: ObligationMarket[];
  kpis: Kpis;
};

type PeriodDates = Pick<ObligationPeriod, "organizationId" | "baseCoinId" | "since" | "until">;

/**
 * Organization, coin and `since` name a period: writing it again replaces its terms. So one
 * input naming a period twice is ambiguous (which terms win?) rather than an update.
 */
export function samePeriod(a: Omit<PeriodDates, "until">, b: Omit<PeriodDates, "until">): boolean {
  return (
    a.organizationId === b.organizationId && a.baseCoinId === b.baseCoinId && a.since === b.since
  );
}

/** Periods of one organization and coin never overlap; the same `since` is the same period. */
export function obligationsOverlap(a: PeriodDates, b: PeriodDates): boolean {
  if (a.organizationId !== b.organizationId || a.baseCoinId !== b.baseCoinId) return false;
  if (a.since === b.since) return false;
  return a.since <= (b.until ?? "9999-12-31") && b.since <= (a.until ?? "9999-12-31");
}

/** `HH:MM`, 00:00 to 23:59: the time of day (UTC) by which the day before must be reported. */
export const DEADLINE_PATTERN = /^([01]\d|2[0-3]):[0-5]\d$/;

/** The report for `date` is due by the next day at `deadlineUtc` (`HH:MM`, UTC). */
export function deadlineOf(date: string, deadlineUtc: string): Date {
  return new Date(`${addDays(date, 1)}T${deadlineUtc}:00.000Z`);
}

/**
 * A day of an obligation market: `pending` until its deadline has passed (counted nowhere),
 * then `missing` without a report, `met` when the report meets every KPI of the period, else
 * `missed`. Lateness and eligibility are judged apart from it.
 */
export type DayStatus = "pending" | "missing" | "met" | "missed";

export function dayStatus(input: {
  date: string;
  now: Date;
  deadlineUtc: string;
  reported: boolean;
  failedKpis: readonly KpiName[];
}): DayStatus {
  if (input.now.getTime() <= deadlineOf(input.date, input.deadlineUtc).getTime()) return "pending";
  if (!input.reported) return "missing";
  return input.failedKpis.length === 0 ? "met" : "missed";
}

/** A report is late when its first accepted version arrived after its day's deadline. */
export function isLate(date: string, firstAcceptedAt: Date, deadlineUtc: string): boolean {
  return firstAcceptedAt.getTime() > deadlineOf(date, deadlineUtc).getTime();
}

/** compliance = daysMet / daysDue, rounded to 4 decimals; null when nothing is due. */
export function compliance(daysMet: number, daysDue: number): number | null {
  return daysDue === 0 ? null : Math.round((daysMet / daysDue) * 10_000) / 10_000;
}
