import { randomBytes } from "node:crypto";
import { createWriteStream, rmSync } from "node:fs";
import { copyFile, lstat, realpath, rename, rm, stat } from "node:fs/promises";
import { dirname } from "node:path";
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
  organizationId?: string;
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
    .option(
      "--organization-id <id>",
      "only this market maker's reports (project and operator keys; a market maker's key exports its own)",
    )
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
  const destination = toStdoutOf(options.out) ? undefined : await destinationOf(options.out);
  if (typeof destination === "string") {
    io.stderr.write(`error: --out ${options.out}: ${destination}\n`);
    return 2;
  }
  const client = createReportsClient({ url, key });
  const { baseCoinId, exchangeId, organizationId, dateGte, dateLte } = options;
  let answer: Awaited<ReturnType<typeof requestCsv>>;
  try {
    answer = await requestCsv(client, { baseCoinId, exchangeId, organizationId, dateGte, dateLte });
  } catch (error) {
    io.stderr.write(`error: cannot reach ${url}: ${(error as Error).message}\n`);
    return 1;
  }
  const { data: body, error, response } = answer;
  if (body === undefined || body === null) return refused(io, response.status, error);
  const rows = csvRowCounter();
  const reports = () => `${rows.count()} report${rows.count() === 1 ? "" : "s"}`;
  const csv = Readable.fromWeb(body as WebReadableStream<Uint8Array>);
  const failure = await (destination === undefined
    ? pipeline(csv, rows.counter, io.stdout, { end: false }).then(() => undefined, describeFailure)
    : writeWhole([csv, rows.counter], destination, () =>
        io.stderr.write(
          `error: interrupted after ${reports()}; ${options.out} was not written: export again\n`,
        ),
      ));
  if (failure !== undefined) {
    const left =
      destination === undefined
        ? "what stdout holds is incomplete"
        : `${options.out} was not written`;
    io.stderr.write(`error: ${failure.replace("{reports}", reports())}; ${left}: export again\n`);
    return 1;
  }
  // On stderr, so that `--out -` leaves stdout to the CSV alone.
  io.stderr.write(
    `exported ${reports()} to ${destination === undefined ? "stdout" : options.out}\n`,
  );
  return 0;
}

const toStdoutOf = (out: string) => out === "-";

/**
 * A regular file is written whole, then renamed into place (`direct` false); a device, a pipe
 * or a socket is written straight into as the CSV comes (`direct`: renaming a file over
 * `/dev/null` or a FIFO would replace it).
 */
type Destination = { path: string; mode: number; direct: boolean };

/**
 * Where a file export goes: the file `out` names (through a symlink, what it points to),
 * written with the mode it has; or why it cannot be (a directory, a symlink to nothing, no
 * such directory).
 */
async function destinationOf(out: string): Promise<Destination | string> {
  const target = await stat(out).catch((error: NodeJS.ErrnoException) => error);
  if (target instanceof Error) {
    if (target.code !== "ENOENT") return target.message;
    if (await lstat(out).then(Boolean, () => false)) return "is a symbolic link to nothing";
    const parent = await stat(dirname(out)).catch(() => undefined);
    return parent?.isDirectory()
      ? { path: out, mode: 0o666, direct: false }
      : "its directory does not exist";
  }
  if (target.isDirectory()) return "is a directory";
  if (!target.isFile()) return { path: out, mode: 0, direct: true };
  // A link whose target has no name (/proc/self/fd/N of a deleted file) is written through.
  const path = await realpath(out).catch(() => undefined);
  if (path === undefined) return { path: out, mode: 0, direct: true };
  return { path, mode: target.mode & 0o777, direct: false };
}

/**
 * Writes the CSV beside the destination under a name nobody can guess or have planted, and
 * renames it into place once whole: a connection lost halfway (or Ctrl-C) leaves no file cut
 * short (an earlier export there stays as it was). Where a rename cannot replace the file (a
 * file mounted into a container), it is copied over instead. Ctrl-C or SIGTERM say after how
 * many reports (`interrupted`). The failure, or undefined.
 */
async function writeWhole(
  [csv, counter]: [Readable, Transform],
  to: Destination,
  interruptedAfter: () => void,
): Promise<string | undefined> {
  if (to.direct)
    return pipeline(csv, counter, createWriteStream(to.path)).then(
      () => undefined,
      describeFailure,
    );
  const partial = `${to.path}.partial-${randomBytes(6).toString("hex")}`;
  const interrupted = (signal: NodeJS.Signals) => {
    rmSync(partial, { force: true });
    interruptedAfter();
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    await pipeline(csv, counter, createWriteStream(partial, { flags: "wx", mode: to.mode }));
    await rename(partial, to.path).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== "EBUSY" && error.code !== "EXDEV") throw error;
      await copyFile(partial, to.path);
    });
    return undefined;
  } catch (error) {
    return describeFailure(error);
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    await rm(partial, { force: true });
  }
}

/** A file that cannot be written, or an answer cut short ("{reports}": how many came). */
function describeFailure(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const message = cause instanceof Error ? cause.message : String(cause);
  if ((cause as NodeJS.ErrnoException).syscall !== undefined)
    return `cannot write the file after {reports} (${message})`;
  return `the export was cut short after {reports} (${message})`;
}

/** The options of the listing's query parameters, to name in a 400's problems. */
const OPTION_OF: Record<string, string> = {
  baseCoinId: "--base-coin-id",
  exchangeId: "--exchange-id",
  organizationId: "--organization-id",
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
