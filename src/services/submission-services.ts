import type { Caller } from "../domain/caller.js";
import type { ReportCardQuery } from "../schemas/report-card.js";
import type { SubmissionsQuery } from "../schemas/submissions.js";
import type { ReadRouting } from "../store/read-router.js";
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
import {
  meteredSubmit,
  meterRejection,
  meterReplay,
  type SubmissionMeter,
} from "./submission-meter.js";
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
  meter?: SubmissionMeter;
  /** Where reads go, and what learns of each key's writes (README "Read replica"). */
  reads: ReadRouting;
}) {
  const { stores, referenceData, now, meter, reads } = context;
  const submissionLog = { stores, now };
  const rejections = createRejectionLog({ stores, now });
  const reportCards = { stores, now, deadlineUtc: context.deadlineUtc };
  // After the write commits and before the answer: the key's next reads, in any process, see
  // it. The batch is stored by then, so a failure to note it never turns its 201 into a 503 (a
  // retry would store it again): its key may then read a replica behind by at most
  // READ_REPLICA_MAX_LAG_MS until its next write.
  const noted = async <T>(caller: Caller, result: T): Promise<T> => {
    if (caller.apiKeyId !== null) await reads.wrote(caller.apiKeyId).catch(() => {});
    return result;
  };
  return {
    submitReports: async (caller: Caller, request: SubmitRequest) =>
      noted(
        caller,
        await meteredSubmit(meter, (r) =>
          submitReports({ reports: stores.reports, referenceData, now }, caller, r),
        )(request),
      ),
    /** The same under an Idempotency-Key: the answer to send, fresh or replayed. */
    submitReportsIdempotently: async (
      caller: Caller,
      request: SubmitRequest,
      idempotency: IdempotentRequest,
    ) => {
      const answer = await submitIdempotently({ stores, now }, caller, idempotency, (writer) =>
        meteredSubmit(meter, (r) =>
          submitReports({ reports: writer, referenceData, now }, caller, r),
        )(request),
      );
      meterReplay(meter, request, answer);
      return noted(caller, answer);
    },
    /** Deletes Idempotency-Keys past retention (the purge job of `serve` calls it). */
    purgeIdempotencyKeys: () => purgeIdempotencyKeys({ stores, now }),
    /** Logs a submission refused after authentication (the route's onError). */
    recordRejection: async (caller: Caller, rejection: Rejection) => {
      meterRejection(meter, rejection);
      return noted(
        caller,
        await recordRejection({ ...submissionLog, rejections }, caller, rejection),
      );
    },
    listSubmissions: (caller: Caller, query: SubmissionsQuery) =>
      listSubmissions(submissionLog, caller, query),
    getSubmission: (caller: Caller, id: string) => getSubmission(submissionLog, caller, id),
    getReportCard: (caller: Caller, query: ReportCardQuery) =>
      reads.read(caller.readAfter, (readers) =>
        getReportCard({ ...reportCards, stores: readers }, caller, query),
      ),
    /** One market maker's report card, for the operator's CLI. */
    operatorReportCard: (organizationId: string, query: ReportCardQuery) =>
      operatorReportCard(reportCards, organizationId, query),
    /** Deletes log rows older than `days` days (SUBMISSION_LOG_DAYS), in small batches. */
    purgeSubmissions: (days: number) => purgeSubmissions(submissionLog, { days }),
  };
}
