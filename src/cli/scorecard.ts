import type { Command } from "commander";
import { ValidationError } from "../domain/errors.js";
import type { ScorecardsResponse } from "../schemas/scorecards.js";
import { SCORECARD_COUNTS, scorecardCsvLines } from "../services/scorecard-csv.js";
import type { System } from "../system.js";
import { UsageError } from "./read-json.js";

type Io = { stdout: NodeJS.WritableStream };
type WithSystem = <T>(work: (system: System) => Promise<T>) => Promise<T>;
type Options = {
  org?: string;
  coin?: string;
  from?: string;
  to?: string;
  json?: boolean;
  csv?: boolean;
};

/** The query parameters the options stand for, to name the option in an error. */
const OPTION_OF: Record<string, string> = {
  organizationId: "--org",
  baseCoinId: "--coin",
  dateGte: "--from",
  dateLte: "--to",
};

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
    .option("--csv", "print CSV, one row per obligation market")
    .action(async (options: Options) => {
      if (options.json && options.csv) throw new UsageError("--json and --csv exclude each other");
      const query = {
        organizationId: options.org,
        baseCoinId: options.coin,
        dateGte: options.from,
        dateLte: options.to,
      };
      const result = await withSystem((system) => system.admin.scorecards(query)).catch(
        (error: unknown) => {
          if (!(error instanceof ValidationError)) throw error;
          throw new ValidationError(
            error.problems.map((p) => ({ ...p, path: OPTION_OF[p.path ?? ""] ?? p.path })),
          );
        },
      );
      const text = options.json
        ? JSON.stringify(result, null, 2)
        : options.csv
          ? scorecardCsvLines(result).join("\n")
          : scorecardTable(result);
      io.stdout.write(`${text}\n`);
    });
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
