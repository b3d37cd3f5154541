import { type Caller, maySubmit } from "../domain/caller.js";
import { addDays, storableDateRange, utcDate } from "../domain/dates.js";
import { NotFoundError, type Problem, ValidationError } from "../domain/errors.js";
import {
  fallbackCode,
  type ProblemCode,
  problemField,
  RETRY_IN_PROGRESS,
} from "../domain/problem-codes.js";
import type { SchemaVersion } from "../domain/report.js";
import {
  BEFORE_MESSAGE,
  DEFAULT_SUBMISSIONS_PAGE_SIZE,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_STORED_MESSAGE_LENGTH,
  MAX_STORED_PROBLEMS,
  type SubmissionDetail,
  type SubmissionPage,
  type SubmissionsQuery,
} from "../schemas/submissions.js";
import type { Stores } from "../store/stores.js";
import type { SubmissionRow } from "../store/submission-store.js";
import type { RejectionLog } from "./rejection-log.js";

export type SubmissionLogDeps = { stores: Stores; now: () => Date };

/** A request to a submission endpoint that was refused after authentication. */
export type Rejection = {
  submissionId: string;
  version: SchemaVersion;
  dryRun: boolean;
  recordCount: number;
  idempotencyKey: string | null;
  problems: Problem[];
};

/**
 * Logs a rejected submission: the problems it answered (the first MAX_STORED_PROBLEMS, and all
 * of them counted by code and field), nothing of its records. A real (not dry-run) rejection
 * also raises `submission.rejected` for the market maker's webhooks, in the same transaction.
 * Resolves once both committed (the rejection log batches the writes of concurrent ones).
 */
export async function recordRejection(
  deps: SubmissionLogDeps & { rejections: RejectionLog },
  caller: Caller,
  rejection: Rejection,
): Promise<void> {
  const receivedAt = deps.now();
  const coded = rejection.problems.map((p) => ({
    path: p.path ?? null,
    message:
      p.message.length > MAX_STORED_MESSAGE_LENGTH
        ? `${p.message.slice(0, MAX_STORED_MESSAGE_LENGTH - 1)}…`
        : p.message,
    code: p.code ?? fallbackCode(p.path),
  }));
  const entry = {
    id: rejection.submissionId,
    organizationId: caller.organizationId,
    apiKeyId: caller.apiKeyId,
    schemaVersion: rejection.version,
    dryRun: rejection.dryRun,
    receivedAt,
    recordCount: rejection.recordCount,
    idempotencyKey: rejection.idempotencyKey,
    problemCount: coded.length,
    problems: coded.slice(0, MAX_STORED_PROBLEMS),
    counts: countByCodeAndField(coded),
  };
  // `submission.rejected` is a market maker's event (CONTRACT section 7): a project's or
  // operator's refused attempt is logged for it, not announced; nor is a retry answered 409
  // while its batch is being stored (that batch is not rejected).
  const event =
    rejection.dryRun || !maySubmit(caller) || coded.some((p) => p.code === RETRY_IN_PROGRESS)
      ? undefined
      : {
          type: "submission.rejected" as const,
          data: {
            submissionId: entry.id,
            apiVersion: entry.schemaVersion,
            recordCount: entry.recordCount,
            problemCount: entry.problemCount,
          },
          organizationId: caller.organizationId,
          baseCoinId: null,
          occurredAt: receivedAt,
          dedupKey: entry.id,
        };
  await deps.rejections.record({ entry, event });
}

function countByCodeAndField(problems: { path: string | null; code: ProblemCode }[]) {
  const counts = new Map<string, { code: ProblemCode; field: string; n: number }>();
  for (const p of problems) {
    const field = problemField(p.path ?? undefined);
    const key = `${p.code}\u0000${field}`;
    const count = counts.get(key);
    if (count === undefined) counts.set(key, { code: p.code, field, n: 1 });
    else count.n++;
  }
  return [...counts.values()];
}

/** The request's Idempotency-Key as the log keeps it: 1 to 255 printable ASCII, else null. */
export function loggedIdempotencyKey(header: string | string[] | undefined): string | null {
  if (typeof header !== "string") return null;
  return header.length <= MAX_IDEMPOTENCY_KEY_LENGTH && /^[\x20-\x7e]+$/.test(header)
    ? header
    : null;
}

/**
 * GET /api/v1/submissions: the caller organization's log, newest first; `before` pages by the
 * last id seen, so that submissions received meanwhile do not shift the pages.
 */
export async function listSubmissions(
  deps: SubmissionLogDeps,
  caller: Caller,
  query: SubmissionsQuery,
): Promise<SubmissionPage> {
  const page = query.page ?? 1;
  const pageSize = query.pageSize ?? DEFAULT_SUBMISSIONS_PAGE_SIZE;
  // Narrowed as a listing's are: the same submissions, and bounds the database can take (a
  // submission is received after 2000 and before the year 9999, not in year 0 or 10000).
  const days = storableDateRange(query.dateGte, query.dateLte);
  const olderThan = query.before?.toLowerCase();
  if (
    olderThan !== undefined &&
    !(await deps.stores.submissions.has(caller.organizationId, olderThan))
  )
    throw new ValidationError([{ path: "before", message: BEFORE_MESSAGE }]);
  const { totalCount, items } = await deps.stores.submissions.list({
    organizationId: caller.organizationId,
    from: days.from === undefined ? undefined : startOfDay(days.from),
    before: days.to === undefined ? undefined : startOfDay(addDays(days.to, 1)),
    status: query.status,
    olderThan,
    limit: pageSize,
    offset: (page - 1) * pageSize,
  });
  return {
    page,
    totalPages: Math.ceil(totalCount / pageSize),
    totalCount,
    items: items.map(itemOf),
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** GET /api/v1/submissions/{id}: another organization's id is as unknown as a made-up one. */
export async function getSubmission(
  deps: SubmissionLogDeps,
  caller: Caller,
  id: string,
): Promise<SubmissionDetail> {
  const found = UUID.test(id)
    ? await deps.stores.submissions.get(caller.organizationId, id.toLowerCase())
    : undefined;
  if (found === undefined) throw new NotFoundError("Submission not found");
  return { ...itemOf(found), problems: found.problems as SubmissionDetail["problems"] };
}

/**
 * Deletes the log rows (and their problems) received more than `days` days ago, in batches of
 * `batchSize` short statements so that ingest never waits on it. Returns how many went.
 */
export async function purgeSubmissions(
  deps: SubmissionLogDeps,
  options: { days: number; batchSize?: number },
): Promise<{ purged: number; before: string }> {
  const before = startOfDay(addDays(utcDate(deps.now()), -options.days));
  const batchSize = options.batchSize ?? PURGE_BATCH;
  let purged = 0;
  for (;;) {
    const n = await deps.stores.submissions.purgeBefore(before, batchSize);
    purged += n;
    if (n < batchSize) return { purged, before: before.toISOString() };
  }
}

const PURGE_BATCH = 500;

const startOfDay = (date: string) => new Date(`${date}T00:00:00Z`);

function itemOf(row: SubmissionRow) {
  return { ...row, receivedAt: new Date(row.receivedAt).toISOString() };
}
