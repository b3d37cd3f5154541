import type { Caller } from "../domain/caller.js";
import type { ReportCardQuery } from "../schemas/report-card.js";
import type { SubmissionsQuery } from "../schemas/submissions.js";
import type { Stores } from "../store/stores.js";
import { type IdempotentRequest, purgeIdempotencyKeys, submitIdempotently } from "./idempotency.js";
import type { ReferenceDataCache } from "./reference-data.js";
import { createRejectionLog } from "./rejection-log.js";
import { getReportCard, operatorReportCard } from "./report-card.js";
import {
  getSubmission,
  listSubmissions,
  purgeSubmissions,
  type Rejection,
  recordRejection,
} from "./submission-log.js";
import { type SubmitRequest, submitReports } from "./submit-reports.js";

/**
 * Submitting and what is kept of it (CONTRACT section 5): the batch itself, its Idempotency-Key,
 * the submission log and the monthly report card.
 */
export function createSubmissionServices(context: {
  stores: Stores;
  referenceData: ReferenceDataCache;
  now: () => Date;
  deadlineUtc: string;
}) {
  const { stores, referenceData, now } = context;
  const submissionLog = { stores, now };
  const rejections = createRejectionLog({ stores, now });
  const reportCards = { stores, now, deadlineUtc: context.deadlineUtc };
  return {
    submitReports: (caller: Caller, request: SubmitRequest) =>
      submitReports({ reports: stores.reports, referenceData, now }, caller, request),
    /** The same under an Idempotency-Key: the answer to send, fresh or replayed. */
    submitReportsIdempotently: (
      caller: Caller,
      request: SubmitRequest,
      idempotency: IdempotentRequest,
    ) =>
      submitIdempotently({ stores, now }, caller, idempotency, (writer) =>
        submitReports({ reports: writer, referenceData, now }, caller, request),
      ),
    /** Deletes Idempotency-Keys past retention (the purge job of `serve` calls it). */
    purgeIdempotencyKeys: () => purgeIdempotencyKeys({ stores, now }),
    /** Logs a submission refused after authentication (the route's onError). */
    recordRejection: (caller: Caller, rejection: Rejection) =>
      recordRejection({ ...submissionLog, rejections }, caller, rejection),
    listSubmissions: (caller: Caller, query: SubmissionsQuery) =>
      listSubmissions(submissionLog, caller, query),
    getSubmission: (caller: Caller, id: string) => getSubmission(submissionLog, caller, id),
    getReportCard: (caller: Caller, query: ReportCardQuery) =>
      getReportCard(reportCards, caller, query),
    /** One market maker's report card, for the operator's CLI. */
    operatorReportCard: (organizationId: string, query: ReportCardQuery) =>
      operatorReportCard(reportCards, organizationId, query),
    /** Deletes log rows older than `days` days (SUBMISSION_LOG_DAYS), in small batches. */
    purgeSubmissions: (days: number) => purgeSubmissions(submissionLog, { days }),
  };
}
