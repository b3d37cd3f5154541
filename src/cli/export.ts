import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Command } from "commander";
import { createReportsClient, type ReportQuery, type ReportsClient } from "../client/index.js";
import type { ExitStatus } from "./exit-status.js";

type Io = {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
};
type ExportOptions = {
  url?: string;
  key?: string;
  out: string;
  baseCoinId?: string;
  exchangeId?: string;
  dateGte?: string;
  dateLte?: string;
};

/**
 * `export`: streams the caller's report listing as CSV into a file (or stdout), and says on
 * stderr how many reports it wrote. The CSV carries `instrumentType` and `type`: it can be
 * submitted again as it is.
 */
export function registerExportCommand(program: Command, io: Io, exit: ExitStatus): void {
  program
    .command("export")
    .description("write the organization's reports (GET /api/v1/reports as CSV) to a file")
    .requiredOption("--out <file>", "CSV file to write ('-': standard output)")
    .option("--url <url>", "base URL of the service (default: $TRADING_REPORTS_URL)")
    .option("--key <key>", "API key (default: $TRADING_REPORTS_API_KEY)")
    .option("--base-coin-id <id>", "only this base coin")
    .option("--exchange-id <id>", "only this exchange")
    .option("--date-gte <date>", "from this date, inclusive")
    .option("--date-lte <date>", "up to this date, inclusive")
    .action(async (options: ExportOptions) => {
      exit.code = await runExport(options, io);
    });
}

export async function runExport(options: ExportOptions, io: Io): Promise<number> {
  const url = options.url ?? io.env.TRADING_REPORTS_URL;
  const key = options.key ?? io.env.TRADING_REPORTS_API_KEY;
  if (!url || !key) {
    io.stderr.write(
      "error: --url and --key (or TRADING_REPORTS_URL and TRADING_REPORTS_API_KEY) are required\n",
    );
    return 2;
  }
  const client = createReportsClient({ url, key });
  const { baseCoinId, exchangeId, dateGte, dateLte } = options;
  let answer: Awaited<ReturnType<typeof requestCsv>>;
  try {
    answer = await requestCsv(client, { baseCoinId, exchangeId, dateGte, dateLte });
  } catch (error) {
    io.stderr.write(`error: cannot reach ${url}: ${(error as Error).message}\n`);
    return 1;
  }
  const { data: body, error, response } = answer;
  if (body === undefined || body === null) return refused(io, response.status, error);
  const rows = csvRowCounter();
  const toStdout = options.out === "-";
  // A file is written beside its name and renamed once whole: a connection lost halfway
  // leaves no file cut short in its place (and an earlier export there as it was).
  const partial = `${options.out}.partial-${process.pid}`;
  try {
    await pipeline(
      Readable.fromWeb(body as WebReadableStream<Uint8Array>),
      rows.counter,
      toStdout ? io.stdout : createWriteStream(partial),
      { end: !toStdout },
    );
    if (!toStdout) await rename(partial, options.out);
  } catch (cause) {
    if (!toStdout) await rm(partial, { force: true });
    const reason = (cause as Error).cause instanceof Error ? (cause as Error).cause : cause;
    const left = toStdout ? "what stdout holds is incomplete" : `${options.out} was not written`;
    io.stderr.write(
      `error: the export was cut short after ${rows.count()} reports (${(reason as Error).message}); ${left}: export again\n`,
    );
    return 1;
  }
  // On stderr, so that `--out -` leaves stdout to the CSV alone.
  const where = toStdout ? "stdout" : options.out;
  io.stderr.write(`exported ${rows.count()} report${rows.count() === 1 ? "" : "s"} to ${where}\n`);
  return 0;
}

/** The options of the listing's query parameters, to name in a 400's problems. */
const OPTION_OF: Record<string, string> = {
  baseCoinId: "--base-coin-id",
  exchangeId: "--exchange-id",
  dateGte: "--date-gte",
  dateLte: "--date-lte",
};

/** A refused export: a 400 names the options (bad usage, exit 2), anything else its status. */
function refused(io: Io, status: number, error: unknown): number {
  const problems = (error as { message?: unknown } | undefined)?.message;
  if (status === 400 && Array.isArray(problems)) {
    for (const problem of problems as { path?: string; message: string }[]) {
      const option = OPTION_OF[problem.path ?? ""] ?? problem.path;
      io.stderr.write(`error: ${option ? `${option}: ` : ""}${problem.message}\n`);
    }
    return 2;
  }
  const detail = typeof error === "string" ? error : JSON.stringify(error ?? "");
  io.stderr.write(`error: ${status} ${detail}\n`);
  return 1;
}

/** The listing as CSV, every page, as a stream: the file is written as it arrives. */
function requestCsv(client: ReportsClient, query: ReportQuery) {
  return client.GET("/api/v1/reports", {
    params: { query },
    headers: { Accept: "text/csv" },
    parseAs: "stream",
  });
}

/**
 * Counts the CSV's data rows as they stream by: line ends outside quoted cells, less the
 * header (a quoted cell may hold line breaks of its own).
 */
function csvRowCounter() {
  let quoted = false;
  let lines = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (const byte of chunk) {
        if (byte === 0x22) quoted = !quoted;
        else if (byte === 0x0a && !quoted) lines++;
      }
      done(null, chunk);
    },
  });
  return { counter, count: () => Math.max(lines - 1, 0) };
}
