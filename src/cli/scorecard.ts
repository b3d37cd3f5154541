import type { Command } from "commander";
import { ValidationError } from "../domain/errors.js";
import type { DailyScorecardsResponse, ScorecardsResponse } from "../schemas/scorecards.js";
import {
  dailyScorecardCsvLines,
  SCORECARD_COUNTS,
  scorecardCsvLines,
} from "../services/scorecard-csv.js";
import type { System } from "../system.js";
import { UsageError } from "./read-json.js";
import { textTable } from "./text-table.js";

type Io = { stdout: NodeJS.WritableStream };
type WithSystem = <T>(work: (system: System) => Promise<T>) => Promise<T>;
type Options = {
  org?: string;
  coin?: string;
  from?: string;
  to?: string;
  json?: boolean;
  csv?: boolean;
  daily?: boolean;
};

/** The query parameters the options stand for, to name the option in an error and its text. */
const OPTION_OF: Record<string, string> = {
  organizationId: "--org",
  baseCoinId: "--coin",
  dateGte: "--from",
  dateLte: "--to",
};
const PARAMETER = /\b(organizationId|baseCoinId|dateGte|dateLte)\b/g;

/**
 * `scorecard`: the operator's scorecards (every organization), computed by the same service as
 * GET /api/v1/scorecards; a table by default, `--json` (the API's answer) or `--csv`.
 */
export function registerScorecardCommand(program: Command, io: Io, withSystem: WithSystem) {
  program
    .command("scorecard")
    .description("scorecards of every obligation market (GET /api/v1/scorecards, operator scope)")
    .option("--org <id>", "only this market maker")
    .option("--coin <id>", "only this base coin")
    .option("--from <date>", "first day, YYYY-MM-DD (default: 29 days before --to)")
    .option("--to <date>", "last day, YYYY-MM-DD (default: yesterday, UTC)")
    .option("--json", "print the API's JSON answer")
    .option("--csv", "print CSV, one row per obligation market (per market and day with --daily)")
    .option("--daily", "one line per obligation market and day (GET /api/v1/scorecards/daily)")
    .action(async (options: Options) => {
      if (options.json && options.csv) throw new UsageError("--json and --csv exclude each other");
      const query = {
        organizationId: options.org,
        baseCoinId: options.coin,
        dateGte: options.from,
        dateLte: options.to,
      };
      const text = await withSystem((system) =>
        options.daily
          ? system.admin.dailyScorecards(query).then((r) => dailyText(r, options))
          : system.admin.scorecards(query).then((r) => summaryText(r, options)),
      ).catch((error: unknown) => {
        if (!(error instanceof ValidationError)) throw error;
        throw new ValidationError(
          error.problems.map((p) => ({
            ...p,
            path: OPTION_OF[p.path ?? ""] ?? p.path,
            message: p.message.replace(PARAMETER, (name) => OPTION_OF[name] ?? name),
          })),
        );
      });
      io.stdout.write(`${text}\n`);
    });
}

function summaryText(result: ScorecardsResponse, options: Options): string {
  if (options.json) return JSON.stringify(result, null, 2);
  return options.csv ? scorecardCsvLines(result).join("\n") : scorecardTable(result);
}

function dailyText(result: DailyScorecardsResponse, options: Options): string {
  if (options.json) return JSON.stringify(result, null, 2);
  if (options.csv) return dailyScorecardCsvLines(result).join("\n");
  const count = result.items.length;
  const title = `daily scorecards ${result.dateGte} to ${result.dateLte}: ${count} market-day${count === 1 ? "" : "s"}`;
  if (count === 0) return title;
  const head = [
    "DATE",
    "ORG",
    "COIN",
    "EXCHANGE",
    "QUOTE",
    "TYPE",
    "STATUS",
    "LATE",
    "FAILED KPIS",
  ];
  const rows = result.items.map((i) => [
    i.date,
    ...MARKET.map((k) => i[k]),
    i.status,
    i.late ? "late" : "-",
    i.failedKpis.join(" ") || "-",
    i.eligibilityStatus ?? "-",
  ]);
  return `${title}\n${textTable([[...head, "ELIGIBILITY"], ...rows])}`;
}

const MARKET = ["organizationId", "baseCoinId", "exchangeId", "quote", "instrumentType"] as const;

function scorecardTable(result: ScorecardsResponse): string {
  const rows = [
    [
      "ORG",
      "COIN",
      "EXCHANGE",
      "QUOTE",
      "TYPE",
      "DUE",
      "REPORTED",
      "MISSING",
      "LATE",
      "ELIGIBLE",
      "MET",
      "COMPLIANCE",
    ],
    ...result.items.map((i) => [
      ...MARKET.map((k) => i[k]),
      ...SCORECARD_COUNTS.map((k) => String(i[k])),
      i.compliance === null ? "-" : `${(i.compliance * 100).toFixed(2)} %`,
    ]),
  ];
  const widths = rows.reduce<number[]>(
    (w, row) => row.map((cell, i) => Math.max(w[i] ?? 0, cell.length)),
    [],
  );
  const lines = rows.map((row) =>
    row
      .map((cell, i) =>
        i >= MARKET.length ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0),
      )
      .join("  ")
      .trimEnd(),
  );
  const title = `scorecards ${result.dateGte} to ${result.dateLte}: ${result.items.length} obligation market${result.items.length === 1 ? "" : "s"}`;
  return [title, ...(result.items.length === 0 ? [] : lines)].join("\n");
}
