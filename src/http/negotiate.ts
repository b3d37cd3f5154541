import Negotiator from "negotiator";

const LISTING_TYPES = ["application/json", "text/csv"];

/**
 * True when the client prefers CSV to JSON by its `Accept` header, q-values included
 * (`text/csv;q=0.1, application/json` is JSON). On equal q-values the more specific range,
 * then the one the client lists first, wins (RFC 9110 12.5.1: `text/*, application/json` is
 * JSON, `text/csv, application/json` CSV). JSON stays the answer without a preference: no
 * `Accept`, one that matches neither type, or the any-type wildcard alone; `text/*` alone is CSV.
 */
export function prefersCsv(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return (
    new Negotiator({ headers: { accept: withoutParameters(accept) } }).mediaType(LISTING_TYPES) ===
    "text/csv"
  );
}

/**
 * Drops media-range parameters other than q: the listing has one representation per type, so
 * `text/csv; charset=utf-8` or `text/csv; header=present` still mean CSV (a negotiator would
 * otherwise match them only to a type offered with the same parameters).
 */
function withoutParameters(accept: string): string {
  return accept
    .split(",")
    .map((range) => {
      const [type = "", ...parameters] = range.split(";");
      const q = parameters.find((p) => /^\s*q\s*=/i.test(p));
      return q === undefined ? type : `${type};${q.trim()}`;
    })
    .join(",");
}
