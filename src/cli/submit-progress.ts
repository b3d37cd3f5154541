import { SingleBar } from "cli-progress";
import type { RecordSource } from "./submission/read-records.js";
import type { BatchReport, RetryNotice } from "./submission/submission-types.js";
import { range } from "./submit-summary.js";

/** Text written to stdout or stderr, unless its reader went away. */
export type Output = { write(text: string): void; readonly stream: NodeJS.WritableStream };

/**
 * A stream whose reader went away (EPIPE: `submit … 2>&1 | head -1`, a log shipper that
 * exited) is written no more. Its error event must not end the run: an upload half done
 * because nobody reads its progress any more would leave later batches unsent, with no
 * summary. The exit code still says how the run went.
 */
export function pipeOutput(stream: NodeJS.WritableStream): Output {
  let open = true;
  // Any write error of an output stream: there is nowhere left to say it.
  stream.on("error", () => {
    open = false;
  });
  return {
    stream,
    write(text) {
      if (!open) return;
      try {
        stream.write(text);
      } catch {
        open = false;
      }
    },
  };
}

/** A progress bar on a terminal; one plain line per batch (or retry) otherwise. */
export function createProgress(stderr: Output, source: RecordSource, dryRun: boolean) {
  const total = source.records.length;
  const isTty = "isTTY" in stderr.stream && stderr.stream.isTTY === true;
  const bar = isTty
    ? new SingleBar({
        stream: stderr.stream,
        format: `${dryRun ? "validating" : "submitting"} [{bar}] {value}/{total} records {status}`,
        hideCursor: true,
      })
    : undefined;
  bar?.start(total, 0, { status: "" });
  let done = 0;
  const answered: BatchReport[] = [];
  return {
    answered: () => answered,
    batch(report: BatchReport) {
      answered.push(report);
      done += report.size;
      if (bar) return bar.update(done, { status: "" });
      stderr.write(`batch ${report.batch}/${report.batches} (${range(source, report)}): `);
      stderr.write(`${report.outcome}\n`);
    },
    retry(notice: RetryNotice) {
      // Tenths of a second: a 500 ms back-off is not "1s".
      const wait = `retrying in ${Number((notice.delayMs / 1000).toFixed(1))}s`;
      if (bar) return bar.update(done, { status: `(${notice.reason}; ${wait})` });
      stderr.write(`batch ${notice.batch}: ${notice.reason}; ${wait}\n`);
    },
    stop() {
      bar?.stop();
    },
  };
}
