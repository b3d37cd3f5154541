import { z } from "zod";
import {
  createReportsClient,
  type ReportsClient,
  type V1Record,
  type V2Record,
} from "../../client/index.js";
import { unlistedProblems } from "../../domain/errors.js";
import { retryAfterMs, retrying } from "../../retry.js";
import { batchJson } from "./batch-json.js";
import { batchIdempotencyKey, withRunKeys } from "./batch-keys.js";
import { batchRetryDelays } from "./retry-delays.js";
import {
  BATCH_LIMITS,
  type BatchOutcome,
  type Rejection,
  type SubmitBatchesOptions,
  type SubmitResult,
} from "./submission-types.js";

/** The spec says to retry 5xx "after a couple of minutes": honour Retry-After up to this. */
const MAX_RETRY_AFTER_MS = 300_000;
/** Retry lines say the first; a batch that ends so says the second. */
const UNREADABLE = "the service's answer could not be read";
const UNREADABLE_AT_LAST = `${UNREADABLE}, so the batch may or may not be stored: submit the file again`;

const problemBodySchema = z.object({
  message: z.array(z.object({ path: z.string().optional(), message: z.string() })),
});
const countsSchema = z.object({ createdCount: z.number(), updatedCount: z.number() });
const messageSchema = z.object({ message: z.string() });

type Attempt =
  | {
      kind: "response";
      status: number;
      body: unknown;
      text: string;
      retryAfterMs?: number;
      /** The service answered an identical earlier request's kept 201 (Idempotency-Key). */
      replayed: boolean;
    }
  | { kind: "network"; message: string }
  /**
   * A success whose body is not JSON: the batch may be stored or not. Retried with the same
   * Idempotency-Key, which the service answers with its kept 201 if it was.
   */
  | { kind: "unreadable"; message: string };

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
  const result: SubmitResult = {
    created: 0,
    updated: 0,
    rejected: [],
    rejectedBatches: 0,
    notStored: 0,
    unlistedProblems: 0,
    failedBatches: [],
    replayedBatches: 0,
  };

  let stopped: string | undefined;
  for (let batch = 1; batch <= batches; batch++) {
    const offset = (batch - 1) * batchSize;
    const records = options.records.slice(offset, offset + batchSize);
    const report = { batch, batches, offset, size: records.length };
    if (result.unauthorized !== undefined) stopped = "the API key was refused";
    if (stopped !== undefined) {
      const message = `not sent: ${stopped}`;
      result.failedBatches.push({ batch, offset, size: records.length, message, notSent: true });
      options.onBatch?.({ ...report, outcome: "skipped", attempts: 0 });
      continue;
    }
    const { attempt, attempts } = await sendWithRetries(client, records, batch, options);
    const outcome = applyAttempt(result, attempt, report);
    options.onBatch?.({ ...report, outcome, attempts });
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
): Promise<{ attempt: Attempt; attempts: number }> {
  const delayOf = batchRetryDelays(options.maxRetries ?? 4);
  const { outcome, attempts } = await retrying(() => send(client, records, options), {
    // Each kind of failure counts against its own budget (retry-delays.ts).
    retries: Number.MAX_SAFE_INTEGER,
    delayMs: (attempt) =>
      isRetryable(attempt) ? delayOf(attempt.kind === "response" ? attempt : {}) : undefined,
    onRetry: (attempt, retry, delayMs) =>
      options.onRetry?.({ batch, attempt: retry, delayMs, reason: describeFailure(attempt) }),
    sleep: options.sleep,
  });
  return { attempt: outcome, attempts };
}

/**
 * One request through the typed client. The records go as they were read: the service judges
 * them (every problem at once), so they are not the client's record types yet.
 */
async function send(
  client: ReportsClient,
  records: readonly unknown[],
  options: SubmitBatchesOptions,
): Promise<Attempt> {
  const header = {
    "idempotency-key": batchIdempotencyKey(options, records),
    ...(options.dryRun ? { "x-dry-run": "true" as const } : {}),
  };
  const init = {
    params: { header },
    signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    bodySerializer: batchJson,
  };
  try {
    const { data, error, response } =
      options.version === "v1"
        ? await client.POST("/api/v1/report", { ...init, body: { data: records as V1Record[] } })
        : await client.POST("/api/v2/report", { ...init, body: { data: records as V2Record[] } });
    const retryAfter = retryAfterMs(response.headers.get("retry-after"), MAX_RETRY_AFTER_MS);
    const body: unknown = data ?? error;
    const text = typeof body === "string" ? body : (JSON.stringify(body) ?? "");
    const replayed = response.headers.get("idempotent-replayed") === "true";
    const { status } = response;
    return { kind: "response", status, body, text, retryAfterMs: retryAfter, replayed };
  } catch (error) {
    // A success whose body is not JSON: the batch may or may not be stored.
    if (error instanceof SyntaxError) return { kind: "unreadable", message: UNREADABLE };
    return { kind: "network", message: networkMessage(error) };
  }
}

/** Adds one batch's final attempt to the result and says how the batch ended. */
function applyAttempt(
  result: SubmitResult,
  attempt: Attempt,
  batch: { batch: number; offset: number; size: number },
): BatchOutcome {
  const failed = (message: string, status?: number): BatchOutcome => {
    result.failedBatches.push({ ...batch, status, message });
    return "failed";
  };
  if (attempt.kind === "unreadable") return failed(UNREADABLE_AT_LAST);
  if (attempt.kind !== "response") return failed(attempt.message);
  const { status, body } = attempt;

  if (status === 200 || status === 201) {
    const counts = countsSchema.safeParse(body);
    if (!counts.success) return failed(UNREADABLE_AT_LAST, status);
    result.created += counts.data.createdCount;
    result.updated += counts.data.updatedCount;
    if (!attempt.replayed) return "accepted";
    result.replayedBatches += 1;
    return "replayed";
  }
  // 403: a project or operator key, which reads only; no later batch can fare better.
  if (status === 401 || status === 403) {
    const message = messageSchema.safeParse(body);
    result.unauthorized = message.success ? message.data.message : "Unauthorized";
    return failed(`the API key was refused: ${result.unauthorized}`, status);
  }
  const problems = status === 400 ? problemBodySchema.safeParse(body) : undefined;
  if (!problems?.success) return failed(describeFailure(attempt), status);

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

function isRetryable(attempt: Attempt): boolean {
  if (attempt.kind !== "response") return true;
  // 409: an earlier attempt of this batch is still being stored; its answer will be replayed.
  const { status } = attempt;
  // A success without the counts (a proxy's page, a body cut short): as an unreadable one.
  if (status === 200 || status === 201) return !countsSchema.safeParse(attempt.body).success;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function describeFailure(attempt: Attempt): string {
  if (attempt.kind !== "response") return attempt.message;
  const message = messageSchema.safeParse(attempt.body);
  const detail = message.success ? message.data.message : attempt.text.trim().slice(0, 200);
  return `HTTP ${attempt.status}${detail ? `: ${detail}` : ""}`;
}

function networkMessage(error: unknown): string {
  if (error instanceof Error && error.name === "TimeoutError") return "request timed out";
  const cause = error instanceof Error ? error.cause : undefined;
  const detail =
    cause instanceof Error ? cause.message : error instanceof Error ? error.message : "";
  return `network error${detail ? `: ${detail}` : ""}`;
}
