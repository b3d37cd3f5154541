import { randomUUID } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Caller } from "../domain/caller.js";
import { ConflictError, UnprocessableError } from "../domain/errors.js";
import type { SubmissionResult } from "../schemas/report.js";
import type { IdempotencyClaim, StoredResponse } from "../store/idempotency-store.js";
import type { ReportStore, SubmissionLog } from "../store/report-store.js";
import type { Stores } from "../store/stores.js";

/** A 201 is replayed for this long after it was answered (CONTRACT section 5). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claim blocks the key (409) without an answer. Past it, another request with the
 * key may take it over (a crashed process never answers); the first request, if it still runs,
 * can then no longer store its batch (see `complete`), so a batch is never applied twice.
 * Longer than any submission takes (statement timeout 15 s, a few retries).
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;
const PURGE_BATCH = 500;
/**
 * A row is purged this long after it expired, not at once: a request still running past its
 * lease (nobody took the key over) then still finds its claim and may store its answer.
 */
const PURGE_GRACE_MS = 60 * 60 * 1000;

export const IN_PROGRESS = "A request with this Idempotency-Key is in progress";
export const DIFFERENT_REQUEST = "Idempotency-Key was used with a different request";

export type IdempotentRequest = {
  key: string;
  /** A digest of what makes two requests the same: API version, dry-run flag, body bytes. */
  requestHash: string;
  /** The 201 as it will be sent (and replayed), for the result and the submission's id. */
  render(result: SubmissionResult, submissionId: string): StoredResponse;
};

export type IdempotencyDeps = { stores: Stores; now: () => Date };

/**
 * Runs a submission under an Idempotency-Key: a replay of the kept 201 when the key holds one
 * for the same request, a 422 for a different request, a 409 while another request holds it;
 * otherwise `submit` runs with a report store whose writes also store the 201, in the same
 * transaction. Any other outcome gives the key up, so a corrected request may use it.
 */
export async function submitIdempotently(
  deps: IdempotencyDeps,
  caller: Caller,
  request: IdempotentRequest,
  submit: (reports: ReportStore) => Promise<SubmissionResult>,
): Promise<{ response: StoredResponse; replayed: boolean }> {
  const held = {
    organizationId: caller.organizationId,
    key: request.key,
    claim: randomUUID(),
    requestHash: request.requestHash,
  };
  const kept = await claimOrReplay(deps, held);
  if (kept !== undefined) return { response: kept, replayed: true };
  let response: StoredResponse | undefined;
  const render = (result: SubmissionResult, log: SubmissionLog) => {
    response = request.render(result, log.id);
    return response;
  };
  try {
    await submit(completingReportStore(deps, held, render));
  } catch (error) {
    // Best effort: a claim that cannot be given up now blocks the key until its lease ends.
    await deps.stores.idempotency.release(held).catch(() => undefined);
    throw error;
  }
  if (response === undefined) throw new Error("the submission stored no answer");
  return { response, replayed: false };
}

/** Undefined once the key is claimed for this request; the kept answer to replay otherwise. */
async function claimOrReplay(
  deps: IdempotencyDeps,
  held: IdempotencyClaim & { requestHash: string },
): Promise<StoredResponse | undefined> {
  // A key found free again between the claim and the look (its request failed): claim again.
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = deps.now();
    const leaseUntil = new Date(now.getTime() + IDEMPOTENCY_LEASE_MS);
    const outcome = await deps.stores.idempotency.claim(held, now, leaseUntil);
    if (outcome.claimed) return undefined;
    if (outcome.held === undefined) continue;
    if (outcome.held.requestHash !== held.requestHash)
      throw new UnprocessableError(DIFFERENT_REQUEST);
    if (outcome.held.response === undefined) throw new ConflictError(IN_PROGRESS);
    return outcome.held.response;
  }
  throw new ConflictError(IN_PROGRESS);
}

/**
 * The report store a claimed submission writes through: the batch (or a dry run's log line)
 * and the 201 it answers commit together, so that a crash after the commit still replays, and
 * a crash before it leaves nothing but a claim that expires. A batch and its answer go in the
 * batch's own statement (the body built around the counts from a template of the rendering);
 * a dry run's log line and its answer in one transaction.
 */
function completingReportStore(
  deps: IdempotencyDeps,
  held: IdempotencyClaim & { requestHash: string },
  render: (result: SubmissionResult, log: SubmissionLog) => StoredResponse,
): ReportStore {
  const { stores, now } = deps;
  const keepUntil = () => new Date(now().getTime() + IDEMPOTENCY_RETENTION_MS);
  const complete = async (tx: Stores, result: SubmissionResult, log: SubmissionLog) => {
    const kept = await tx.idempotency.complete(held, render(result, log), keepUntil());
    // Taken over after this request's lease ran out: the other request stores the batch.
    if (!kept) throw new ConflictError(IN_PROGRESS);
  };
  return {
    ...stores.reports,
    upsert: async (log, reports, referenceVersion) => {
      const template = render(TEMPLATE_COUNTS, log);
      const bodyAround = bodyAroundCounts(template.body);
      if (bodyAround === undefined)
        return stores.transaction(async (tx) => {
          const counts = await tx.reports.upsert(log, reports, referenceVersion);
          if (counts !== undefined) await complete(tx, counts, log);
          return counts;
        });
      const completion = { ...held, bodyAround, headers: template.headers, keepUntil: keepUntil() };
      const stored = await stores.reports.upsertCompleting(
        completion,
        log,
        reports,
        referenceVersion,
      );
      if (!stored.held) throw new ConflictError(IN_PROGRESS);
      if (stored.counts === undefined) return undefined;
      const response = render(stored.counts, log);
      // The template and the rendering agree by construction; should they ever not, the
      // rendering is what was answered, so it is what is kept.
      if (stored.keptBody !== response.body)
        await stores.idempotency.complete(held, response, completion.keepUntil);
      return stored.counts;
    },
    logDryRun: (log, recordCount, counts) =>
      stores.transaction(async (tx) => {
        await tx.reports.logDryRun(log, recordCount, counts);
        await complete(tx, counts, log);
      }),
  };
}

/** Counts no batch has (over the batch limit), rendered once to find where the counts go. */
const TEMPLATE_COUNTS = { createdCount: 987_654_321, updatedCount: 123_456_789 };

/** The body before, between and after the two counts; undefined if it is not so simple. */
function bodyAroundCounts(body: string): [string, string, string] | undefined {
  const parts = body.split(String(TEMPLATE_COUNTS.createdCount));
  const rest = parts[1]?.split(String(TEMPLATE_COUNTS.updatedCount));
  if (parts.length !== 2 || rest?.length !== 2) return undefined;
  return [parts[0] ?? "", rest[0] ?? "", rest[1] ?? ""];
}

/**
 * Deletes the keys expired over PURGE_GRACE_MS ago in batches of PURGE_BATCH, yielding between batches, so that a
 * purge holds no lock for long and lets requests run in between. Returns how many it deleted.
 */
export async function purgeIdempotencyKeys(deps: IdempotencyDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const before = new Date(deps.now().getTime() - PURGE_GRACE_MS);
    const deleted = await deps.stores.idempotency.purgeExpired(before, PURGE_BATCH);
    total += deleted;
    if (deleted < PURGE_BATCH) return total;
    await nextTurn();
  }
}
