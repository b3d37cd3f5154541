import { createWriteStream } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Command } from "commander";
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

/** `export`: streams the caller's report listing as CSV into a file. */
export function registerExportCommand(program: Command, io: Io, exit: ExitStatus): void {
  program
    .command("export")
    .description("write the organization's reports (GET /api/v1/reports as CSV) to a file")
    .requiredOption("--out <file>", "CSV file to write")
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
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries({
    baseCoinId: options.baseCoinId,
    exchangeId: options.exchangeId,
    dateGte: options.dateGte,
    dateLte: options.dateLte,
  })) {
    if (value !== undefined) query.set(name, value);
  }
  let response: Response;
  try {
    response = await fetch(`${url.replace(/\/+$/, "")}/api/v1/reports?${query}`, {
      headers: { authorization: key, accept: "text/csv" },
    });
  } catch (error) {
    io.stderr.write(`error: cannot reach ${url}: ${(error as Error).message}\n`);
    return 1;
  }
  if (!response.ok || response.body === null) {
    io.stderr.write(`error: ${response.status} ${await response.text()}\n`);
    return 1;
  }
  await pipeline(
    Readable.fromWeb(response.body as WebReadableStream<Uint8Array>),
    createWriteStream(options.out),
  );
  io.stdout.write(`wrote ${options.out}\n`);
  return 0;
}
