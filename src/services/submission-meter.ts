import type { Problem } from "../domain/errors.js";
import type { SchemaVersion } from "../domain/report.js";
import type { SubmissionResult } from "../schemas/report.js";
import type { Rejection } from "./submission-log.js";
import type { SubmitRequest } from "./submit-reports.js";

/**
 * Hears every submission once it is decided (GET /metrics counts them). Called after the
 * outcome is known, with counts the service has anyway: nothing per record.
 */
export type SubmissionMeter = {
  /** Answered 201: the records it created and updated (a dry run: would have). */
  accepted(version: SchemaVersion, dryRun: boolean, result: SubmissionResult): void;
  /** Refused after authentication (400, 409, 413, 415, 422): nothing of it was stored. */
  rejected(
    version: SchemaVersion,
    dryRun: boolean,
    recordCount: number,
    problems: readonly Problem[],
  ): void;
  /** A kept 201 sent again for its Idempotency-Key: no record counted a second time. */
  replayed(version: SchemaVersion): void;
};

type Submit = (request: SubmitRequest) => Promise<SubmissionResult>;

/** `submit`, telling `meter` what it answered. */
export function meteredSubmit(meter: SubmissionMeter | undefined, submit: Submit): Submit {
  if (meter === undefined) return submit;
  return async (request) => {
    const result = await submit(request);
    meter.accepted(request.version, request.dryRun, result);
    return result;
  };
}

/** Tells `meter` of a rejection before it is logged (a failing log still counts it). */
export function meterRejection(meter: SubmissionMeter | undefined, rejection: Rejection): void {
  meter?.rejected(rejection.version, rejection.dryRun, rejection.recordCount, rejection.problems);
}

/** Tells `meter` of a replayed answer. */
export function meterReplay(
  meter: SubmissionMeter | undefined,
  request: SubmitRequest,
  answer: { replayed: boolean },
): void {
  if (answer.replayed) meter?.replayed(request.version);
}
