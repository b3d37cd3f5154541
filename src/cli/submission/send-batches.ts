import { z } from "zod";
import { createReportsClient, type ReportsClient } from "../../client/index.js";
import { unlistedProblems } from "../../domain/errors.js";
import { retrying } from "../../retry.js";
import {
  type Attempt,
  answerLost,
  countsSchema,
  describeFailure,
  isRetryable,
  messageSchema,
  ownAnswerLost,
  send,
  UNREADABLE,
  unreachable,
} from "./batch-attempt.js";
import { withRunKeys } from "./batch-keys.js";
import { batchRetryDelays } from "./retry-delays.js";
import {
  BATCH_LIMITS,
  type BatchOutcome,
  type Rejection,
  type SubmitBatchesOptions,
  type SubmitResult,
} from "./submission-types.js";

const problemBodySchema = z.object({
  message: z.array(z.object({ path: z.string().optional(), message: z.string() })),
});

/**
 * How a batch's attempts went: the last one; whether any may have stored the batch unanswered
 * (`lost`), and whether one of this run's own may have (`ownLost`: not a mere 409).
 */
type Sent = { attempt: Attempt; attempts: number; lost: boolean; ownLost: boolean };

/** A run's result before any batch is answered. */
export function emptyResult(): SubmitResult {
  return {
    created: 0,
    updated: 0,
    rejected: [],
    rejectedBatches: 0,
    notStored: 0,
    unlistedProblems: 0,
    failedBatches: [],
    replayedBatches: 0,
    replayedRecords: 0,
  };
}

/**
 * Sends the records in sequential batches (the service stores each batch atomically) and
 * maps the service's problems back to input record indexes.
 */
export async function submitBatches(submitted: SubmitBatchesOptions): Promise<SubmitResult> {
  const options = withRunKeys(submitted);
  const limit = BATCH_LIMITS[options.version];
  const batchSize = options.batchSize ?? limit;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > limit) {
    throw new RangeError(`batch size must be an integer from 1 to ${limit} for ${options.version}`);
  }
  const client = createReportsClient({ url: options.url, key: options.key, fetch: options.fetch });
  const batches = Math.ceil(options.records.length / batchSize);
  const result = options.result ?? emptyResult();

  let stopped: string | undefined;
  for (let batch = 1; batch <= batches; batch++) {
    const offset = (batch - 1) * batchSize;
    const records = options.records.slice(offset, offset + batchSize);
    const report = { batch, batches, offset, size: records.length };
    if (result.unauthorized !== undefined) stopped = "the API key was refused";
    if (result.unreachable !== undefined) stopped = result.unreachable.reason;
    if (stopped !== undefined) {
      const message = `not sent: ${stopped}`;
      result.failedBatches.push({ batch, offset, size: records.length, message, notSent: true });
      options.onBatch?.({ ...report, outcome: "skipped", attempts: 0 });
      continue;
    }
    const sent = await sendWithRetries(client, records, batch, options);
    const outcome = applyAttempt(result, sent, { ...report, dryRun: options.dryRun });
    options.onBatch?.({ ...report, outcome, attempts: sent.attempts });
    // Refused connections, DNS, TLS, a wrong URL: every later batch would fare the same.
    const reason = unreachable(sent.attempt);
    if (reason !== undefined)
      result.unreachable = { reason, detail: describeFailure(sent.attempt) };
    if (options.stopAfterFailure && (outcome === "failed" || outcome === "rejected"))
      stopped = `batch ${batch} failed (all or nothing: no batch is sent after it)`;
  }
  return result;
}

async function sendWithRetries(
  client: ReportsClient,
  records: readonly unknown[],
  batch: number,
  options: SubmitBatchesOptions,
): Promise<Sent> {
  const delayOf = batchRetryDelays(options.maxRetries ?? 4);
  let [lost, ownLost] = [false, false];
  const attempt = async () => {
    const outcome = await send(client, records, options);
    lost ||= answerLost(outcome);
    ownLost ||= ownAnswerLost(outcome);
    return outcome;
  };
  const { outcome, attempts } = await retrying(attempt, {
    // Each kind of failure counts against its own budget (retry-delays.ts).
    retries: Number.MAX_SAFE_INTEGER,
    delayMs: (attempt) =>
      isRetryable(attempt) ? delayOf(attempt.kind === "response" ? attempt : {}) : undefined,
    onRetry: (attempt, retry, delayMs) =>
      options.onRetry?.({ batch, attempt: retry, delayMs, reason: describeFailure(attempt) }),
    sleep: options.sleep,
  });
  return { attempt: outcome, attempts, lost, ownLost };
}

/** Adds one batch's final attempt to the result and says how the batch ended. */
function applyAttempt(
  result: SubmitResult,
  { attempt, lost, ownLost }: Sent,
  { dryRun, ...batch }: { batch: number; offset: number; size: number; dryRun: boolean },
): BatchOutcome {
  const failed = (message: string, status?: number): BatchOutcome => {
    // An attempt whose answer was lost may have stored the batch (a dry run stores nothing).
    const mayBeStored = lost && !dryRun;
    result.failedBatches.push({ ...batch, status, message, mayBeStored });
    return "failed";
  };
  if (attempt.kind !== "response") return failed(attempt.message);
  const { status, body } = attempt;

  if (status === 200 || status === 201) {
    const counts = countsSchema.safeParse(body);
    if (!counts.success) return failed(UNREADABLE, status);
    // A kept answer replayed to a retry after this run's own lost answer is this run's; else
    // an earlier run (or another one at once) stored the batch, and this run changed nothing.
    if (!attempt.replayed || ownLost) {
      result.created += counts.data.createdCount;
      result.updated += counts.data.updatedCount;
      return "accepted";
    }
    result.replayedBatches += 1;
    result.replayedRecords += batch.size;
    return "replayed";
  }
  // 403: a project or operator key, which reads only; no later batch can fare better.
  if (status === 401 || status === 403) {
    const message = messageSchema.safeParse(body);
    result.unauthorized = message.success ? message.data.message : "Unauthorized";
    return failed(`the API key was refused: ${result.unauthorized}`, status);
  }
  const problems = status === 400 ? problemBodySchema.safeParse(body) : undefined;
  // 413: the records are wide (long text, unknown fields): fewer a request get through.
  const hint = status === 413 ? " (records this wide need a smaller --batch-size)" : "";
  if (!problems?.success) return failed(`${describeFailure(attempt)}${hint}`, status);

  // Past MAX_PROBLEMS_PER_RESPONSE the answer ends with `… and N more problems`: of records
  // the batch holds, not of the batch as a whole.
  const listed = problems.data.message.filter((problem) => {
    const unlisted = unlistedProblems(problem);
    if (unlisted !== undefined) result.unlistedProblems += unlisted;
    return unlisted === undefined;
  });
  const mapped = listed.map((problem) => toRejection(problem, batch));
  const rejections = mapped.filter((entry): entry is Rejection => "index" in entry);
  const batchProblems = mapped.filter((entry) => !("index" in entry)).map((entry) => entry.message);
  if (batchProblems.length > 0 || rejections.length === 0) {
    result.rejected.push(...rejections);
    return failed(batchProblems.join("; ") || "rejected without a reason", status);
  }
  result.rejected.push(...rejections);
  result.rejectedBatches += 1;
  result.notStored += batch.size - new Set(rejections.map((entry) => entry.index)).size;
  return "rejected";
}

/** `data.<i>.<field>` -> input index `offset + i` and the field; anything else is batch-wide. */
function toRejection(
  problem: { path?: string; message: string },
  batch: { offset: number; size: number },
): Rejection | { message: string } {
  const match = /^data\.(\d+)(?:\.(.+))?$/.exec(problem.path ?? "");
  const position = Number(match?.[1]);
  if (!match || position >= batch.size) {
    return { message: problem.path ? `${problem.path}: ${problem.message}` : problem.message };
  }
  const rejection: Rejection = { index: batch.offset + position, message: problem.message };
  if (match[2] !== undefined) rejection.field = match[2];
  const related = /\bdata\.(\d+)\b/.exec(problem.message);
  if (related && Number(related[1]) < batch.size) {
    rejection.related = batch.offset + Number(related[1]);
  }
  return rejection;
}
