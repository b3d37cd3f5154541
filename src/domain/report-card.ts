import { addDays, addMonths, utcDate } from "./dates.js";

/**
 * Peer medians are shown only when at least this many market makers report in the month:
 * with two, the median (their mean) and one's own figure give away the other's.
 */
export const MIN_PEERS = 3;

/** The rates of a report card, each beside the median of the market makers that month. */
export const REPORT_CARD_RATES = [
  "rejectedSubmissions",
  "rejectedRecords",
  "missingReports",
  "lateReports",
  "correctionsAfterDeadline",
] as const;
export type ReportCardRate = (typeof REPORT_CARD_RATES)[number];

/** One market maker's counts of a month, from which its rates follow. */
export type MonthFigures = {
  submissions: number;
  rejectedSubmissions: number;
  recordsAccepted: number;
  recordsRejected: number;
  reportsDue: number;
  reportsMissing: number;
  reportsLate: number;
  reportsStored: number;
  correctionsAfterDeadline: number;
};

export const NO_FIGURES: MonthFigures = {
  submissions: 0,
  rejectedSubmissions: 0,
  recordsAccepted: 0,
  recordsRejected: 0,
  reportsDue: 0,
  reportsMissing: 0,
  reportsLate: 0,
  reportsStored: 0,
  correctionsAfterDeadline: 0,
};

/** A share rounded to 4 decimals, as scorecards round compliance; null when nothing to divide. */
export function share(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000;
}

export function ratesOf(f: MonthFigures): Record<ReportCardRate, number | null> {
  return {
    rejectedSubmissions: share(f.rejectedSubmissions, f.submissions),
    rejectedRecords: share(f.recordsRejected, f.recordsAccepted + f.recordsRejected),
    missingReports: share(f.reportsMissing, f.reportsDue),
    lateReports: share(f.reportsLate, f.reportsDue),
    correctionsAfterDeadline: share(f.correctionsAfterDeadline, f.reportsStored),
  };
}

/** The median of the values present, or null with fewer than MIN_PEERS of them. */
export function peerMedian(values: readonly (number | null)[]): number | null {
  const present = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (present.length < MIN_PEERS) return null;
  const middle = Math.floor(present.length / 2);
  const median =
    present.length % 2 === 1
      ? (present[middle] as number)
      : ((present[middle - 1] as number) + (present[middle] as number)) / 2;
  return Math.round(median * 10_000) / 10_000;
}

/** `YYYY-MM` -> its first and last day. */
export function monthDays(month: string): { dateGte: string; dateLte: string } {
  const dateGte = `${month}-01`;
  return { dateGte, dateLte: addDays(addMonths(dateGte, 1), -1) };
}

/** The last month that has ended by `now` (UTC). */
export function lastCompleteMonth(now: Date): string {
  return addMonths(`${utcDate(now).slice(0, 7)}-01`, -1).slice(0, 7);
}
