import { addDays, utcDate } from "./dates.js";

/**
 * The last day whose deadline has passed at `now` (CONTRACT section 4): day D is due once
 * `now` is after D+1 at `deadlineUtc`; every later day is still pending. Same rule as
 * `dayStatus`, as a date, so that a query can count due days without listing them.
 */
export function lastDueDay(now: Date, deadlineUtc: string): string {
  const [hours = 0, minutes = 0] = deadlineUtc.split(":").map(Number);
  // The latest midnight strictly before `now` less the deadline's time of day is D+1's.
  const shifted = new Date(now.getTime() - (hours * 60 + minutes) * 60_000 - 1);
  return addDays(utcDate(shifted), -1);
}
