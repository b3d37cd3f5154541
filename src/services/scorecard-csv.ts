import { csvCell } from "../domain/csv-cell.js";
import { KPI_NAMES } from "../domain/obligation.js";
import type { DailyScorecardsResponse, ScorecardsResponse } from "../schemas/scorecards.js";

const MARKET = ["baseCoinId", "exchangeId", "quote", "instrumentType"] as const;
/** The day counts of a scorecard, in the JSON item's order. */
export const SCORECARD_COUNTS = [
  "daysDue",
  "daysReported",
  "daysMissing",
  "daysLate",
  "daysEligible",
  "daysMet",
] as const;

/** The summary's columns before the KPI pairs, in order. */
export const SCORECARD_CSV_COLUMNS = [
  "dateGte",
  "dateLte",
  "organizationId",
  "organizationName",
  ...MARKET,
  ...SCORECARD_COUNTS,
  "compliance",
  "daysFlagged",
  "medianDepthShare200.bid",
  "medianDepthShare200.ask",
] as const;

/** The day-by-day columns, in order. */
export const DAILY_SCORECARD_CSV_COLUMNS = [
  "date",
  "organizationId",
  "organizationName",
  ...MARKET,
  "status",
  "late",
  "failedKpis",
  "eligibilityStatus",
] as const;

/**
 * The scorecards as CSV lines (no line ends; the API ends them with CRLF, the CLI with LF): a
 * header, then one row per obligation market, its range first so that a saved file says which
 * days it covers. Each KPI set on some market gets two columns, `<kpi>.daysMet` and
 * `<kpi>.daysMissed`, in catalogue order; a market whose periods do not set it has them empty.
 * Nulls (compliance with nothing due, a median without snapshots) are empty cells.
 */
export function scorecardCsvLines(result: ScorecardsResponse): string[] {
  const kpis = KPI_NAMES.filter((k) => result.items.some((i) => i.kpis[k] !== undefined));
  const header = [
    ...SCORECARD_CSV_COLUMNS,
    ...kpis.flatMap((k) => [`${k}.daysMet`, `${k}.daysMissed`]),
  ];
  const rows = result.items.map((i) => [
    result.dateGte,
    result.dateLte,
    i.organizationId,
    i.organizationName,
    ...MARKET.map((k) => i[k]),
    ...SCORECARD_COUNTS.map((k) => i[k]),
    i.compliance,
    i.daysFlagged,
    i.medianDepthShare200.bid,
    i.medianDepthShare200.ask,
    ...kpis.flatMap((k) => [i.kpis[k]?.daysMet, i.kpis[k]?.daysMissed]),
  ]);
  return [header, ...rows].map(csvLine);
}

/**
 * The day-by-day scorecards as CSV lines: one row per obligation market and day, as in JSON;
 * `failedKpis` separated by spaces, `late` as `true`/`false`, no eligibility an empty cell.
 */
export function dailyScorecardCsvLines(result: DailyScorecardsResponse): string[] {
  const rows = result.items.map((i) => [
    i.date,
    i.organizationId,
    i.organizationName,
    ...MARKET.map((k) => i[k]),
    i.status,
    i.late,
    i.failedKpis.join(" "),
    i.eligibilityStatus,
  ]);
  return [[...DAILY_SCORECARD_CSV_COLUMNS], ...rows].map(csvLine);
}

const csvLine = (cells: readonly unknown[]) => cells.map(csvCell).join(",");
