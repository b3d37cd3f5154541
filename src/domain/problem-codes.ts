/**
 * The catalogue of problem codes (CONTRACT section 5): one stable snake_case code per rule a
 * submission can break, the same in v1 and v2. A code names the rule, never the field: the
 * problem's `path` says where. Codes are only ever added, never renamed or reused.
 */
export const PROBLEM_CODES = {
  required: "A required field is missing (null is `wrong_type`)",
  wrong_type: "The value has the wrong JSON type, such as a string where a number is expected",
  not_finite: "A number is not finite (such as 1e309)",
  below_minimum: "A number is below its minimum (depths and volumes must be >= 0)",
  above_maximum: "A number is above its maximum (percentages must be <= 100)",
  invalid_enum: "The value is not one of the allowed values (instrumentType, type)",
  text_too_short: "A text is shorter than allowed (an empty identifier)",
  text_too_long: "A text is longer than allowed (identifiers: 200 characters)",
  text_not_storable: "A text holds a NUL character or a lone surrogate",
  invalid_date: "Not a real calendar date in the form YYYY-MM-DD",
  date_not_past: "The date is today or later (UTC): the trading day must be over",
  date_too_early: "The date is before 2000-01-01",
  unknown_exchange: "No supported exchange has this id",
  unknown_base_coin: "No coin has this base coin id",
  unknown_quote_coin: "No coin has this quote coin id",
  missing_quote: "Neither quoteCoinId nor quoteCoinSymbol is given",
  not_spot_exchange: "A spot record names an exchange (and exchange group) without spot markets",
  not_derivatives_exchange:
    "A perp record names an exchange (and exchange group) without derivatives markets",
  duplicate_record_key: "Two records of the batch have the same record key",
  batch_too_small: "The batch holds no record",
  batch_too_large: "The batch holds more records than allowed (v1 1000, v2 300)",
  invalid_header: "A request header has a value that is not allowed (x-dry-run, Idempotency-Key)",
  malformed_json: "The body is not valid JSON",
  body_too_large: "The body is larger than the limit (413)",
  unsupported_media_type: "The body is not sent as application/json (415)",
  idempotency_key_in_progress:
    "A request with this Idempotency-Key is still being worked on (409): retry to get its answer",
  idempotency_key_reused: "This Idempotency-Key was used with a different request (422)",
  invalid_value: "Any other invalid value",
  key_may_not_submit:
    "The API key is a token project's or an operator's, which do not submit (403)",
} as const;

export type ProblemCode = keyof typeof PROBLEM_CODES;

/**
 * A 409 answering a retry of a batch that a request with the same Idempotency-Key is storing:
 * logged (CONTRACT 5), but no verdict on the batch, which may well be stored: no submission of
 * the report card, no `submission.rejected` event.
 */
export const RETRY_IN_PROGRESS: ProblemCode = "idempotency_key_in_progress";

export const PROBLEM_CODE_NAMES = Object.keys(PROBLEM_CODES) as [ProblemCode, ...ProblemCode[]];

/** Headers whose bad values are 400s with the header's name as the path. */
const HEADER_PATHS = new Set(["x-dry-run", "Idempotency-Key", "idempotency-key"]);

/** The code of a problem raised without one (a header check of a route). */
export function fallbackCode(path: string | undefined): ProblemCode {
  return path !== undefined && HEADER_PATHS.has(path) ? "invalid_header" : "invalid_value";
}

/**
 * The field a problem is about, for counting problems by field: `data.3.bidDepth50` ->
 * `bidDepth50`, `data.3` -> `record` (duplicates), `data` -> `data` (batch size), a header's
 * name, and `body` for a problem of the whole body (malformed JSON, 413, 415).
 */
export function problemField(path: string | undefined): string {
  if (path === undefined || path === "") return "body";
  const parts = path.split(".");
  if (parts[0] === "data" && parts.length >= 3) return parts.slice(2).join(".");
  if (parts[0] === "data" && parts.length === 2) return "record";
  return path;
}
