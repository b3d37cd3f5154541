/** The earliest trading date the service accepts. */
export const EARLIEST_DATE = "2000-01-01";

/**
 * Past the last date a listing bound is taken as is. No report is dated after the day it was
 * submitted, so no stored report lies beyond it; and the month arithmetic of a listing's count
 * stays inside years that PostgreSQL accepts and JavaScript writes as YYYY (year 0 and year
 * 10000 are neither).
 */
const LATEST_BOUND = "9998-12-31";

/**
 * A listing's date bounds narrowed to the dates a stored report can have (EARLIEST_DATE to
 * LATEST_BOUND); the records selected are the same, and every date the query parser accepts
 * (years 0000 to 9999) becomes one the database accepts.
 */
export function storableDateRange(
  from: string | undefined,
  to: string | undefined,
): { from: string | undefined; to: string | undefined } {
  const clamp = (date: string | undefined, low: string, high: string) =>
    date === undefined ? undefined : date < low ? low : date > high ? high : date;
  return {
    // A bound beyond the other end keeps the range empty, as it was.
    from: clamp(from, EARLIEST_DATE, "9999-01-01"),
    to: clamp(to, "1999-12-31", LATEST_BOUND),
  };
}

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date written YYYY-MM-DD (so 2025-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (match === null) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** In the proleptic Gregorian calendar, as JavaScript dates and PostgreSQL count. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Today's date in UTC, as YYYY-MM-DD. */
export function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return utcDate(d);
}

/** The first day of the month of `date`. */
export function monthOf(date: string): string {
  return `${date.slice(0, 7)}-01`;
}

/** The first day of the month `months` after the month starting on `month`. */
export function addMonths(month: string, months: number): string {
  const d = new Date(`${month}T00:00:00Z`);
  d.setUTCMonth(d.getUTCMonth() + months);
  return utcDate(d);
}

/**
 * The whole calendar months inside [from, to] (either end open when undefined), as the first
 * days of the first and last such month; undefined when the range holds no whole month.
 */
export function wholeMonthsWithin(
  from: string | undefined,
  to: string | undefined,
): { first: string | undefined; last: string | undefined } | undefined {
  const first =
    from === undefined ? undefined : from === monthOf(from) ? from : addMonths(monthOf(from), 1);
  const last =
    to === undefined
      ? undefined
      : addDays(to, 1) === addMonths(monthOf(to), 1)
        ? monthOf(to)
        : addMonths(monthOf(to), -1);
  if (first !== undefined && last !== undefined && first > last) return undefined;
  return { first, last };
}
