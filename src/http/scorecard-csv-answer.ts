import type { FastifyReply } from "fastify";
import type { DailyScorecardsResponse, ScorecardsResponse } from "../schemas/scorecards.js";
import { dailyScorecardCsvLines, scorecardCsvLines } from "../services/scorecard-csv.js";

/** RFC 4180 text of CSV lines: each ends with CRLF. */
export function csvText(lines: readonly string[]): string {
  return lines.map((line) => `${line}\r\n`).join("");
}

const rangeOf = (result: { dateGte: string; dateLte: string }) =>
  `${result.dateGte}-${result.dateLte}`;

/** The scorecards as a CSV download named after their range (API and dashboard alike). */
export function sendScorecardsCsv(reply: FastifyReply, result: ScorecardsResponse) {
  return sendCsv(reply, `scorecards-${rangeOf(result)}.csv`, scorecardCsvLines(result));
}

/** The day-by-day scorecards as a CSV download named after their range. */
export function sendDailyScorecardsCsv(reply: FastifyReply, result: DailyScorecardsResponse) {
  return sendCsv(reply, `scorecards-daily-${rangeOf(result)}.csv`, dailyScorecardCsvLines(result));
}

function sendCsv(reply: FastifyReply, filename: string, lines: string[]) {
  return reply
    .header("content-type", "text/csv; charset=utf-8")
    .header("content-disposition", `attachment; filename="${filename}"`)
    .send(csvText(lines));
}
