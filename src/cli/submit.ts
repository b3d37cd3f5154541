import { randomUUID } from "node:crypto";
import { type Command, CommanderError } from "commander";
import type { ExitStatus } from "./exit-status.js";
import { refuseDuplicateKeys } from "./submission/duplicate-keys.js";
import { RecordFileError, type RecordSource, readRecords } from "./submission/read-records.js";
import { emptyResult, submitBatches } from "./submission/send-batches.js";
import {
  BATCH_LIMITS,
  type SubmissionVersion,
  type SubmitResult,
} from "./submission/submission-types.js";
import { ExchangeLookupError, refuseV2Fields } from "./submission/v1-fields.js";
import { createProgress, type Output, pipeOutput } from "./submit-progress.js";
import {
  batchCount,
  batchesRange,
  humanSummary,
  interruptionNote,
  isClean,
  jsonSummary,
  type Mode,
} from "./submit-summary.js";

export type SubmitIo = {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: Record<string, string | undefined>;
  /** Test seams: replace the waits between retries and the HTTP client. */
  sleep?: (ms: number) => Promise<void>;
  fetch?: typeof fetch;
};

export type SubmitCommandOptions = {
  url?: string;
  key?: string;
  v1?: boolean;
  dryRun?: boolean;
  allOrNothing?: boolean;
  batchSize?: string;
  json?: boolean;
  freshKeys?: boolean;
};

const EXIT_OK = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

class UsageError extends Error {}

const EXIT_CODES_HELP = `
Exit codes:
  0    every batch stored, now or by an earlier run (with --dry-run: accepted)
  1    a record rejected, a batch failed or not sent, or one whose answer was lost
  2    bad usage or an unusable file (unreadable, malformed, one record key twice, v2 data with --v1)
  130  interrupted (Ctrl-C, SIGINT)
  143  stopped (SIGTERM)
`;

/** Adds `submit <file>`; the exit code goes to `exit`. */
export function registerSubmitCommand(program: Command, io: SubmitIo, exit: ExitStatus): Command {
  return program
    .command("submit")
    .description("submit report records from a CSV or JSON file to the reporting service")
    .argument(
      "<file>",
      'records: a .csv or .json file (by its extension; no stdin): CSV with a header row of field names, JSON an array or {"data": [...]}',
    )
    .option("--url <url>", "base URL of the service (default: $TRADING_REPORTS_URL)")
    .option("--key <key>", "API key (default: $TRADING_REPORTS_API_KEY, which keeps it out of ps)")
    .option("--v1", "submit through the v1 schema instead of v2")
    .option("--dry-run", "validate only; the service stores nothing")
    .option(
      "--all-or-nothing",
      "dry-run every batch first; store only if none has a problem (otherwise store nothing)",
    )
    .option("--batch-size <n>", "records per request (default and maximum: v2 300, v1 1000)")
    .option("--json", "print a machine-readable summary on stdout")
    .option(
      "--fresh-keys",
      "Idempotency-Keys of this run only: a batch an earlier run stored (within 24 h) is applied again, not answered from its kept 201 (retries stay safe)",
    )
    .addHelpText("after", EXIT_CODES_HELP)
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride((error) => {
      // Commander's own usage errors (unknown option, missing argument) exit 1 by default;
      // the contract says 2. Throwing hands the error to whoever awaits parseAsync.
      const exitCode = error.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
      exit.code = exitCode;
      throw new CommanderError(exitCode, error.code, error.message);
    })
    .action(async (file: string, options: SubmitCommandOptions) => {
      exit.code = await runSubmit(file, options, io);
    });
}

/** The whole command, returning its exit code. */
export async function runSubmit(
  file: string,
  options: SubmitCommandOptions,
  streams: SubmitIo,
): Promise<number> {
  const io = { ...streams, stdout: pipeOutput(streams.stdout), stderr: pipeOutput(streams.stderr) };
  let settings: ReturnType<typeof resolveSettings>;
  let source: RecordSource;
  try {
    settings = resolveSettings(options, io.env);
    source = await readRecords(file);
    if (source.records.length === 0) throw new UsageError(`${file}: no records to submit`);
    refuseDuplicateKeys(file, source, settings.version);
    if (settings.version === "v1")
      await refuseV2Fields(file, source, { ...settings, fetch: io.fetch });
  } catch (error) {
    if (error instanceof ExchangeLookupError) {
      io.stderr.write(`submit: ${error.message}\n`);
      return EXIT_FAILED;
    }
    if (!(error instanceof UsageError || error instanceof RecordFileError)) throw error;
    io.stderr.write(`submit: ${error.message}\n`);
    return EXIT_USAGE;
  }

  const json = options.json === true;
  const send = (dryRun: boolean, more = {}) =>
    sendPass(io, source, { ...settings, json }, { dryRun, ...more });

  // All or nothing: every batch is validated (a dry run) before any is stored. The service
  // stores each batch atomically, not the whole file: a batch that fails after a clean dry
  // run (the network, reference data changed meanwhile) still leaves earlier batches stored.
  let mode: Mode = settings.dryRun ? "dry-run" : "store";
  let result = await send(settings.dryRun || settings.allOrNothing);
  if (!settings.dryRun && settings.allOrNothing) {
    if (isClean(result)) result = await send(false, { stopAfterFailure: true });
    else mode = "all-or-nothing-refused";
  }

  if (result.unauthorized !== undefined) {
    io.stderr.write(
      `submit: the service refused the API key (${result.unauthorized}); ` +
        "check --key or TRADING_REPORTS_API_KEY. Nothing more was sent.\n",
    );
  }
  if (result.unreachable !== undefined) {
    const { reason, detail } = result.unreachable;
    io.stderr.write(`submit: ${reason} (${detail}); nothing more was sent\n`);
  }
  const summary = options.json
    ? `${JSON.stringify(jsonSummary(result, source, { ...settings, mode }))}\n`
    : humanSummary(result, source, { mode, freshKeys: settings.keySalt !== undefined });
  io.stdout.write(summary);
  return isClean(result) ? EXIT_OK : EXIT_FAILED;
}

/**
 * One pass over the file's batches, with its progress; interrupted (Ctrl-C, a supervisor's
 * stop), it says what was stored and what not, then goes.
 */
async function sendPass(
  io: Omit<SubmitIo, "stdout" | "stderr"> & { stdout: Output; stderr: Output },
  source: RecordSource,
  settings: ReturnType<typeof resolveSettings> & { json: boolean },
  pass: { dryRun: boolean; stopAfterFailure?: boolean },
): Promise<SubmitResult> {
  const progress = createProgress(io.stderr, source, pass.dryRun);
  const partial = emptyResult();
  const interrupted = (signal: NodeJS.Signals) => {
    progress.stop();
    const batches = batchCount(source, settings);
    const locate = (from: number, to: number) => batchesRange(source, settings.batchSize, from, to);
    const run = { batches, dryRun: pass.dryRun, freshKeys: !!settings.keySalt, locate };
    io.stderr.write(interruptionNote(progress.answered(), run));
    // A script reading --json's stdout gets an object saying so, not an empty string.
    if (settings.json) {
      const mode: Mode = pass.dryRun ? "dry-run" : "store";
      const summary = jsonSummary(partial, source, { ...settings, dryRun: pass.dryRun, mode });
      const answered = progress.answered().length;
      const inFlight = answered < batches ? answered + 1 : null;
      const notSent = Math.max(0, batches - answered - 1);
      const note = { signal, batchInFlight: inFlight, batchesNotSent: notSent };
      io.stdout.write(`${JSON.stringify({ ...summary, ok: false, interrupted: note })}\n`);
    }
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  try {
    return await submitBatches({
      ...settings,
      ...pass,
      records: source.records,
      result: partial,
      fetch: io.fetch,
      sleep: io.sleep,
      onBatch: progress.batch,
      onRetry: progress.retry,
    });
  } finally {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    progress.stop();
  }
}

function resolveSettings(options: SubmitCommandOptions, env: Record<string, string | undefined>) {
  const url = options.url ?? env.TRADING_REPORTS_URL;
  if (!url) throw new UsageError("missing --url (or TRADING_REPORTS_URL)");
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`invalid --url '${url}'`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`invalid --url '${url}': expected http:// or https://`);
  }
  const key = options.key ?? env.TRADING_REPORTS_API_KEY;
  if (!key) throw new UsageError("missing API key: pass --key or set TRADING_REPORTS_API_KEY");

  const version: SubmissionVersion = options.v1 ? "v1" : "v2";
  const limit = BATCH_LIMITS[version];
  const batchSize = options.batchSize === undefined ? limit : Number(options.batchSize);
  if (!/^\d+$/.test(options.batchSize ?? "1") || batchSize < 1 || batchSize > limit) {
    throw new UsageError(`--batch-size must be an integer from 1 to ${limit} for ${version}`);
  }
  const dryRun = options.dryRun === true;
  const keySalt = options.freshKeys ? randomUUID() : undefined;
  const allOrNothing = options.allOrNothing === true;
  return { url, key, version, batchSize, dryRun, allOrNothing, keySalt };
}
