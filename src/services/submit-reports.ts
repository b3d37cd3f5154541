import { randomUUID } from "node:crypto";
import { type Caller, maySubmit } from "../domain/caller.js";
import { utcDate } from "../domain/dates.js";
import { ForbiddenError, UnavailableError } from "../domain/errors.js";
import { type SchemaVersion, sortByRecordKey } from "../domain/report.js";
import type { SubmissionResult } from "../schemas/report.js";
import type { ReportStore } from "../store/report-store.js";
import type { ReferenceDataCache } from "./reference-data.js";
import { validateBatch } from "./validate-batch.js";

export type SubmitDeps = {
  reports: ReportStore;
  referenceData: ReferenceDataCache;
  now: () => Date;
};

/**
 * Validates a submission as a whole and, unless it is a dry run, stores it atomically.
 * A dry run answers the counts the real submission would answer and stores no report.
 */
export async function submitReports(
  deps: SubmitDeps,
  caller: Caller,
  request: SubmitRequest,
): Promise<SubmissionResult> {
  assertMaySubmit(caller);
  for (let attempt = 1; ; attempt++) {
    const ref = await deps.referenceData.current();
    const receivedAt = deps.now();
    const reports = sortByRecordKey(
      validateBatch(request.version, request.body, ref, utcDate(receivedAt)),
    );
    const log = {
      id: request.submissionId ?? randomUUID(),
      organizationId: caller.organizationId,
      apiKeyId: caller.apiKeyId,
      schemaVersion: request.version,
      receivedAt,
      idempotencyKey: request.idempotencyKey ?? null,
    };
    if (request.dryRun) {
      const existing = await deps.reports.countExisting(caller.organizationId, reports);
      const counts = { createdCount: reports.length - existing, updatedCount: existing };
      await deps.reports.logDryRun(log, reports.length, counts);
      return counts;
    }
    const stored = await deps.reports.upsert(log, reports, ref.version);
    if (stored !== undefined) return stored;
    // Market data changed since this batch was checked: check it again against the new data.
    deps.referenceData.invalidate();
    if (attempt >= MAX_ATTEMPTS)
      throw new UnavailableError("reference data keeps changing; retry later");
  }
}

const MAX_ATTEMPTS = 5;

export type SubmitRequest = {
  version: SchemaVersion;
  body: unknown;
  dryRun: boolean;
  /** The submission log's id for this request (its `x-submission-id`); default a new one. */
  submissionId?: string;
  idempotencyKey?: string | null;
};

/** Only market makers submit (CONTRACT section 4); project and operator keys only read. */
export function assertMaySubmit(caller: Caller): void {
  if (!maySubmit(caller)) throw new ForbiddenError("This API key cannot submit reports");
}
