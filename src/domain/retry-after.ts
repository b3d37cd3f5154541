/**
 * `Retry-After` in delay-seconds or as an HTTP date, in milliseconds from `now`, within 0 and
 * `capMs` (a day-long ban is not waited for blindly); undefined when absent or unreadable.
 */
export function retryAfterMs(
  header: string | null | undefined,
  capMs: number,
  now = Date.now(),
): number | undefined {
  if (header === null || header === undefined || header.trim() === "") return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - now;
  if (Number.isNaN(ms)) return undefined;
  return Math.min(capMs, Math.max(0, ms));
}
