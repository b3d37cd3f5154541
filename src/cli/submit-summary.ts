import type { RecordSource } from "./submission/read-records.js";
import type {
  BatchReport,
  SubmissionVersion,
  SubmitResult,
} from "./submission/submission-types.js";

/** How the records were sent: stored, only validated, or refused whole after a dry run. */
export type Mode = "store" | "dry-run" | "all-or-nothing-refused";

export function isClean(result: SubmitResult): boolean {
  return result.rejected.length === 0 && result.failedBatches.length === 0;
}

const HEADINGS: Record<Mode, string> = {
  store: "",
  "dry-run": "dry run, nothing stored: ",
  "all-or-nothing-refused":
    "all or nothing: the dry run found problems, so nothing was stored; what the dry run answered: ",
};

/** What a run says beyond the counts: how to resume, which depends on `--fresh-keys`. */
export type SummaryRun = { mode: Mode; freshKeys: boolean };

export function humanSummary(result: SubmitResult, source: RecordSource, run: SummaryRun): string {
  const lines = [`${HEADINGS[run.mode]}${headline(result)}`];
  for (const rejection of result.rejected) {
    const field = rejection.field === undefined ? "" : ` ${rejection.field}`;
    const where = source.locate(rejection.index, rejection.field);
    lines.push(`${where}${field}: ${describe(rejection, source)}`);
  }
  const { failed, lost, unsent } = failedKinds(result);
  for (const batch of failed) {
    lines.push(`batch ${batch.batch} (${range(source, batch)}) not stored: ${batch.message}`);
  }
  for (const batch of lost) {
    const where = `batch ${batch.batch} (${range(source, batch)})`;
    lines.push(`${where} may or may not be stored, its answer was lost: ${batch.message}`);
  }
  const [first, last] = [unsent[0], unsent.at(-1)];
  if (first && last) {
    const span = { offset: first.offset, size: last.offset + last.size - first.offset };
    const why = first.message.replace(/^not sent: /, "");
    lines.push(`${unsent.length} batch(es) not sent (${range(source, span)}): ${why}`);
  }
  if (result.replayedBatches > 0 && run.mode === "store")
    lines.push(
      "if these reports were changed since that run, submit the file with --fresh-keys to apply it again",
    );
  if (run.mode === "store" && lost.length + unsent.length > 0)
    lines.push(resumeHint(run.freshKeys, lost.length > 0));
  return `${lines.join("\n")}\n`;
}

function headline(result: SubmitResult): string {
  const rejectedRecords = new Set(result.rejected.map((rejection) => rejection.index)).size;
  let head = `created ${result.created}, updated ${result.updated}, rejected ${rejectedRecords}`;
  if (result.rejectedBatches > 0) {
    head += ` (records of rejected batches not stored: ${result.notStored})`;
  }
  if (result.unlistedProblems > 0) {
    head += `, ${result.unlistedProblems} more problems not listed by the service (records not named; fix the ones listed and send again)`;
  }
  const { failed, lost, unsent } = failedKinds(result);
  const notStored = [...failed, ...unsent];
  if (notStored.length > 0) {
    head += `, failed batches ${notStored.length} (records not stored: ${records(notStored)})`;
  }
  if (lost.length > 0) {
    head += `, answer lost for ${lost.length} batch(es) (records that may or may not be stored: ${records(lost)})`;
  }
  if (result.replayedBatches > 0) {
    head += `, ${result.replayedBatches} batch(es) (${result.replayedRecords} records) already stored by an earlier run (answers replayed): nothing changed`;
  }
  return head;
}

/** Failed batches: not stored, answer lost (may be stored), not sent. */
function failedKinds(result: SubmitResult) {
  const { failedBatches } = result;
  return {
    failed: failedBatches.filter((batch) => !batch.notSent && !batch.mayBeStored),
    lost: failedBatches.filter((batch) => batch.mayBeStored),
    unsent: failedBatches.filter((batch) => batch.notSent),
  };
}

const records = (batches: readonly { size: number }[]) =>
  batches.reduce((sum, batch) => sum + batch.size, 0);

/** Running the file again is safe: a batch stored already is replayed, or (fresh keys) upserted. */
function resumeHint(freshKeys: boolean, lost: boolean): string {
  const again = `submit the file again to ${lost ? "find out and to " : ""}send what is missing`;
  return freshKeys
    ? `${again}: a batch already stored is applied again (the same values, counted as updated), never stored twice`
    : `${again}: a batch already stored is answered from the service's record (its Idempotency-Key, within 24 hours), not stored twice`;
}

/**
 * True when a batch is known stored: answered 201 by this run's storing pass, or its kept 201
 * replayed (an earlier run stored it). False for a dry run, an all-or-nothing run that found
 * problems, and a run whose every batch was rejected, failed, not sent (a refused key) or lost
 * its answer (`mayBeStoredBatches` counts those).
 */
function knownStored(result: SubmitResult, mode: Mode): boolean {
  return mode === "store" && result.created + result.updated + result.replayedBatches > 0;
}

export function jsonSummary(
  result: SubmitResult,
  source: RecordSource,
  settings: {
    version: SubmissionVersion;
    dryRun: boolean;
    allOrNothing: boolean;
    batchSize: number;
    mode: Mode;
  },
) {
  return {
    ok: isClean(result),
    version: settings.version,
    dryRun: settings.dryRun,
    allOrNothing: settings.allOrNothing,
    stored: knownStored(result, settings.mode),
    records: source.records.length,
    batches: batchCount(source, settings),
    created: result.created,
    updated: result.updated,
    rejectedRecords: new Set(result.rejected.map((rejection) => rejection.index)).size,
    rejectedBatches: result.rejectedBatches,
    notStored: result.notStored,
    ...failedCounts(result),
    unlistedProblems: result.unlistedProblems,
    replayedBatches: result.replayedBatches,
    replayedRecords: result.replayedRecords,
    rejected: result.rejected.map((rejection) => ({
      ...rejection,
      // "same as data.0" names a record of its batch: the file's, as the human summary does.
      message: describe(rejection, source),
      location: source.locate(rejection.index, rejection.field),
      ...(rejection.related === undefined
        ? {}
        : { relatedLocation: source.locate(rejection.related) }),
    })),
    failedBatches: result.failedBatches.map((batch) => ({
      ...batch,
      notSent: batch.notSent === true,
      mayBeStored: batch.mayBeStored === true,
      location: range(source, batch),
    })),
    unauthorized: result.unauthorized ?? null,
    /** Set (signal, batch in flight, batches not sent) when Ctrl-C or SIGTERM ended the run. */
    interrupted: null as null | {
      signal: string;
      batchInFlight: number | null;
      batchesNotSent: number;
    },
    /** Why the run stopped sending: the service out of reach, or a wrong URL (404). */
    unreachable: result.unreachable
      ? `${result.unreachable.reason}: ${result.unreachable.detail}`
      : null,
  };
}

/** The `--json` counts of failed batches, by whether their records are stored (README). */
function failedCounts(result: SubmitResult) {
  const { failed, lost, unsent } = failedKinds(result);
  return {
    failedRecords: records(failed) + records(unsent),
    mayBeStoredBatches: lost.length,
    mayBeStoredRecords: records(lost),
    notSentBatches: unsent.length,
    notSentRecords: records(unsent),
  };
}

/** Server messages name other records by batch position (`data.3`): name them as in the file. */
function describe(rejection: { message: string; related?: number }, source: RecordSource): string {
  const { related } = rejection;
  if (related === undefined) return rejection.message;
  return rejection.message.replace(/\bdata\.\d+\b/, source.locate(related));
}

export function range(source: RecordSource, batch: { offset: number; size: number }): string {
  const first = source.locate(batch.offset);
  return batch.size === 1 ? first : `${first} to ${source.locate(batch.offset + batch.size - 1)}`;
}

/** The file's lines of batches `from` to `to` (one-based) of `batchSize` records. */
export function batchesRange(source: RecordSource, batchSize: number, from: number, to: number) {
  const offset = (from - 1) * batchSize;
  const end = Math.min(source.records.length, to * batchSize);
  return range(source, { offset, size: end - offset });
}

/** The batches a run sends. */
export const batchCount = (source: RecordSource, settings: { batchSize: number }) =>
  Math.ceil(source.records.length / settings.batchSize);

/**
 * What an interrupted run says on stderr: the batches answered and stored, the one being sent
 * (which may be stored: its answer never came), the ones not sent, and that running the file
 * again is safe.
 */
export function interruptionNote(
  answered: readonly BatchReport[],
  run: {
    batches: number;
    dryRun: boolean;
    freshKeys: boolean;
    /** The file's lines of batches `from` to `to` (one-based): `line 2 to line 301`. */
    locate?: (from: number, to: number) => string;
  },
): string {
  const { batches, dryRun } = run;
  const at = (from: number, to = from) => (run.locate ? ` (${run.locate(from, to)})` : "");
  const stored = answered.filter((r) => r.outcome === "accepted" || r.outcome === "replayed");
  const next = answered.length + 1;
  const parts = [
    `submit: interrupted; ${answered.length} of ${batches} batch(es) answered, ${
      dryRun ? "nothing stored (a dry run)" : `${stored.length} of them stored`
    }`,
  ];
  if (next <= batches)
    parts.push(
      `batch ${next}${at(next)} was being sent${dryRun ? "" : " and may or may not be stored"}`,
    );
  if (next + 1 === batches) parts.push(`batch ${batches}${at(batches)} not sent`);
  if (next + 1 < batches)
    parts.push(`batches ${next + 1} to ${batches}${at(next + 1, batches)} not sent`);
  if (!dryRun && !run.freshKeys)
    parts.push(
      "submitting the file again is safe: a batch already stored is answered from the service's record (its Idempotency-Key, within 24 hours), not stored twice",
    );
  // --fresh-keys: a batch sent again is applied again (the same values, counted as updated).
  if (!dryRun && run.freshKeys)
    parts.push("submitting the file again applies the stored batches again (--fresh-keys)");
  return `${parts.join("; ")}\n`;
}
