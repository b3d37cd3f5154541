import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { capProblems, DomainError, type Problem, ValidationError } from "../domain/errors.js";
import { throttledErrors } from "../log-throttle.js";

/** The body of every error response (spec section 7, CONTRACT section 2). */
export type ErrorBody =
  | { statusCode: 400; error: "Bad Request"; message: Problem[] }
  | { statusCode: 401; message: string }
  | { statusCode: number; error: string; message: string };

export const RETRY_AFTER_SECONDS = { unavailable: 5, overloaded: 1 };

/**
 * The 400 of CONTRACT section 2: each problem's path and message. Problem codes are kept in the
 * submission log (GET /api/v1/submissions/{id}), not added here: the specified answer stays
 * exactly what a market-maker key sees today.
 */
export function badRequest(problems: Problem[]): ErrorBody {
  const message = problems.map(({ path, message }) =>
    path === undefined ? { message } : { path, message },
  );
  return { statusCode: 400, error: "Bad Request", message };
}

/** What a 500 says: the details are logged with the request id, never answered. */
export const INTERNAL_ERROR_MESSAGE = "Internal server error; retry in a couple of minutes";

export function errorBody(statusCode: number, message: string): ErrorBody {
  if (statusCode === 400) return badRequest([{ message }]);
  if (statusCode === 401) return { statusCode: 401, message };
  return { statusCode, error: STATUS_CODES[statusCode] ?? "Error", message };
}

/** The HTTP status of each kind of domain error, for the API and the dashboard alike. */
export const STATUS_OF_KIND: Record<DomainError["kind"], number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unprocessable: 422,
  unavailable: 503,
};

/** How often a 503's cause is logged whole, with its stack (each 503 logs its message). */
const UNAVAILABLE_STACK_EVERY_MS = 10_000;

/** The error handler of the app, with the problem cap of the configuration. */
export function errorHandler(options: { maxProblems: number }) {
  const handling = { ...options, unavailable: throttledErrors(UNAVAILABLE_STACK_EVERY_MS) };
  return (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) =>
    handleError(error, request, reply, handling);
}

/**
 * Maps every error to a status and the specified body. Domain errors carry their own kind;
 * Fastify's errors (body parsing, limits) keep their 4xx status; everything else is a 5xx
 * whose body never shows internals (they go to the log, with the request id).
 */
function handleError(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
  options: { maxProblems: number; unavailable: ReturnType<typeof throttledErrors> },
) {
  if (error instanceof DomainError) {
    const status = STATUS_OF_KIND[error.kind];
    if (error.kind === "invalid") {
      const problems =
        error instanceof ValidationError
          ? capProblems(error.problems, options.maxProblems)
          : [{ message: error.message }];
      return reply.code(400).send(badRequest(problems));
    }
    if (error.kind === "unavailable") {
      request.log.warn(options.unavailable(error.cause ?? error).fields, "dependency unavailable");
      reply.header("retry-after", String(RETRY_AFTER_SECONDS.unavailable));
      return reply.code(503).send(errorBody(503, "Service temporarily unavailable; retry later"));
    }
    return reply.code(status).send(errorBody(status, error.message));
  }
  const fastifyError = error as FastifyError;
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return reply.code(status).send(clientErrorBody(fastifyError, status));
  }
  request.log.error({ err: error }, "request failed");
  return reply.code(500).send(errorBody(500, INTERNAL_ERROR_MESSAGE));
}

export function clientErrorBody(error: FastifyError, status: number): ErrorBody {
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return badRequest([{ message: "Malformed JSON body" }]);
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return errorBody(413, "Request body is larger than the limit");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return errorBody(415, "Unsupported Media Type: send application/json");
    case "TR_ERR_UNSUPPORTED_CONTENT_ENCODING":
      return errorBody(415, error.message);
    default:
      // A JSON syntax error from the body parser carries no code of its own.
      if (status === 400 && error instanceof SyntaxError)
        return badRequest([{ message: "Malformed JSON body" }]);
      return errorBody(
        status,
        status === 400 ? error.message : (STATUS_CODES[status] ?? error.message),
      );
  }
}

export const overloadedRetryAfter = RETRY_AFTER_SECONDS.overloaded;
