import { randomUUID } from "node:crypto";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  type Problem,
  UnprocessableError,
  ValidationError,
} from "../domain/errors.js";
import type { ProblemCode } from "../domain/problem-codes.js";
import type { SchemaVersion } from "../domain/report.js";
import type { Services } from "../services/index.js";
import { loggedIdempotencyKey } from "../services/submission-log.js";
import { clientErrorBody } from "./errors.js";

/** The submission id of each request a submission endpoint took (authenticated, may submit). */
const submissionIds = new WeakMap<FastifyRequest, string>();
/** The requests whose submission is in the log: their answer carries `x-submission-id`. */
const logged = new WeakSet<FastifyRequest>();

const KEY_PATH = "Idempotency-Key";

/** Fastify's own refusals of a body, as the problems their answers carry. */
const BODY_ERROR_CODES: Record<string, ProblemCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: "malformed_json",
  FST_ERR_CTP_EMPTY_JSON_BODY: "malformed_json",
  FST_ERR_CTP_BODY_TOO_LARGE: "body_too_large",
  FST_ERR_CTP_INVALID_MEDIA_TYPE: "unsupported_media_type",
  TR_ERR_UNSUPPORTED_CONTENT_ENCODING: "unsupported_media_type",
};

/**
 * The submission log's side of a submission route (CONTRACT section 5). Every request that
 * authenticated gets a submission id; an accepted one is logged by the service with its batch,
 * a refused one (400, 413, 415: the batch, a header, the body; 409, 422: its Idempotency-Key;
 * 403: a key that may not submit) by `onError` before the error answer goes out. Either answer
 * then carries `x-submission-id` (an answer not made by the service, such as a replay, names no
 * new submission). Not logged nor numbered: a 401 (nobody to log it for), a 429 (refused before
 * the route: logging it would write for every refused request), a 5xx (nothing was decided).
 */
export function submissionFeedback(services: Services, version: SchemaVersion) {
  return {
    onRequest: async (request: FastifyRequest) => {
      submissionIds.set(request, randomUUID());
      // Only market makers submit: a project or operator key gets its 403 whatever it sends
      // (its body unread), logged as its organization's rejected submission.
      services.assertMaySubmit(request.caller);
    },
    onError: async (request: FastifyRequest, _reply: FastifyReply, error: Error) => {
      const submissionId = submissionIds.get(request);
      const problems = submissionId === undefined ? undefined : rejectedProblems(error);
      if (submissionId === undefined || problems === undefined) return;
      try {
        await services.recordRejection(request.caller, {
          submissionId,
          version,
          dryRun: headerText(request.headers["x-dry-run"]).trim().toLowerCase() === "true",
          recordCount: recordCountOf(request.body),
          idempotencyKey: loggedIdempotencyKey(request.headers["idempotency-key"]),
          problems,
        });
        logged.add(request);
      } catch (failure) {
        // The caller's mistake is answered all the same, without a submission id.
        request.log.warn({ err: failure }, "rejected submission not logged");
      }
    },
    onSend: async (request: FastifyRequest, reply: FastifyReply) => {
      const submissionId = submissionIds.get(request);
      if (submissionId !== undefined && logged.has(request))
        reply.header("x-submission-id", submissionId);
    },
  };
}

/** The service stored (or dry-ran) the submission and logged it: its answer names it. */
export function submissionLogged(request: FastifyRequest): void {
  logged.add(request);
}

/** What the service needs to log the request as accepted. */
export function submissionOf(request: FastifyRequest) {
  return {
    submissionId: submissionIds.get(request),
    idempotencyKey: loggedIdempotencyKey(request.headers["idempotency-key"]),
  };
}

/** The problems a refusal answers, or undefined when it is no verdict on the submission. */
function rejectedProblems(error: Error): Problem[] | undefined {
  if (error instanceof ValidationError) return error.problems;
  // The Idempotency-Key's refusals: no batch was looked at, but the request was answered.
  if (error instanceof ConflictError)
    return [{ path: KEY_PATH, message: error.message, code: "idempotency_key_in_progress" }];
  if (error instanceof UnprocessableError)
    return [{ path: KEY_PATH, message: error.message, code: "idempotency_key_reused" }];
  if (error instanceof ForbiddenError)
    return [{ message: error.message, code: "key_may_not_submit" }];
  if (error instanceof DomainError) return undefined;
  const fastifyError = error as FastifyError;
  const status = fastifyError.statusCode ?? 0;
  const code =
    BODY_ERROR_CODES[fastifyError.code] ??
    (status === 400 && error instanceof SyntaxError ? "malformed_json" : undefined);
  if (code === undefined) return undefined;
  const body = clientErrorBody(fastifyError, status);
  return typeof body.message === "string"
    ? [{ message: body.message, code }]
    : body.message.map((p) => ({ ...p, code }));
}

function recordCountOf(body: unknown): number {
  const data = typeof body === "object" && body !== null ? Reflect.get(body, "data") : undefined;
  return Array.isArray(data) ? data.length : 0;
}

const headerText = (value: string | string[] | undefined) =>
  typeof value === "string" ? value : "";
