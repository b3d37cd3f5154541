import { createHash, randomUUID } from "node:crypto";
import type { SubmitBatchesOptions } from "./submission-types.js";

/**
 * A dry run stores nothing, so replaying an earlier run's answer protects nothing, and that
 * answer may no longer hold: the reports, or the reference data that judged them, changed
 * since. Its keys are of this run only; a lost answer's retry is still answered from the
 * first (one entry in the submission log, not two). `--all-or-nothing` relies on it: its
 * dry run must judge the batches as the store that follows will.
 */
export function withRunKeys(options: SubmitBatchesOptions): SubmitBatchesOptions {
  if (!options.dryRun || options.keySalt !== undefined) return options;
  return { ...options, keySalt: randomUUID() };
}

/**
 * One Idempotency-Key per batch, derived from what the request is (API version, dry run, the
 * records as sent), so that a batch retried after a timeout, or sent again by a rerun within
 * 24 hours, is answered from the service's kept 201 and never applied twice. A salt
 * (`--fresh-keys`, and every dry run: `withRunKeys`) limits that to the retries of one run.
 */
export function batchIdempotencyKey(
  options: { version: string; dryRun: boolean; keySalt?: string },
  records: readonly unknown[],
): string {
  const digest = createHash("sha256")
    .update(`${options.keySalt ?? ""}\n${JSON.stringify({ data: records })}`)
    .digest("hex");
  return `trs-${options.version}-${options.dryRun ? "dry-run" : "store"}-${digest}`;
}
