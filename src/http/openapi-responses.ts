import type { z } from "zod";
import { badRequestSchema, errorSchema, unauthorizedSchema } from "../schemas/reference.js";

/**
 * The error answers of the API, each with its description and example, for routes to declare
 * (CONTRACT section 2). A route lists every status it can answer:
 * - `...authenticatedErrors` on every route behind an API key (401, 429, 500, 503);
 * - `...queryErrors` when it has a query string, `...bodyErrors` when it takes a JSON body;
 * - `403`, `404`, `409`, `422` from `errorResponses` when its service can refuse so.
 * Their headers (Retry-After, rate limit, request id) are added to the document by
 * openapi-finish.ts.
 */
const error = (schema: z.ZodType, description: string, example: unknown) =>
  schema.meta({ description, examples: [example] });

const fixed400 = (message: { path?: string; message: string }[]) => ({
  statusCode: 400,
  error: "Bad Request",
  message,
});

const fixed = (statusCode: number, text: string, message: string) => ({
  statusCode,
  error: text,
  message,
});

/** An error answer in the `{statusCode, error, message}` shape, for a route's own 4xx. */
export const errorResponse = (
  statusCode: number,
  text: string,
  description: string,
  message: string,
) => error(errorSchema, description, fixed(statusCode, text, message));

/** Every error answer, by status. */
export const errorResponses = {
  400: error(
    badRequestSchema,
    "Invalid request: every problem, in record order",
    fixed400([
      { path: "data.0.bidDepth50", message: "Expected number, received string" },
      {
        path: "data.3.baseCoinId",
        message: "Base coin with id 'chainlnk' does not match any valid ticker id",
      },
    ]),
  ),
  401: error(unauthorizedSchema, "No API key, or an invalid or revoked one", {
    statusCode: 401,
    message: "Invalid API key",
  }),
  403: errorResponse(
    403,
    "Forbidden",
    "This API key may not do this",
    "This API key cannot submit reports",
  ),
  409: errorResponse(
    409,
    "Conflict",
    "A request with the same Idempotency-Key is still being worked on; retry later",
    "A request with this Idempotency-Key is in progress",
  ),
  413: errorResponse(
    413,
    "Payload Too Large",
    "Body over the size limit (BODY_LIMIT_BYTES)",
    "Request body is larger than the limit",
  ),
  415: errorResponse(
    415,
    "Unsupported Media Type",
    "Body is not JSON, or is compressed (a Content-Encoding other than identity)",
    "Unsupported Media Type: send application/json",
  ),
  422: errorResponse(
    422,
    "Unprocessable Entity",
    "The Idempotency-Key was used (within 24 hours) with a different body, API version or x-dry-run",
    "Idempotency-Key was used with a different request",
  ),
  429: errorResponse(
    429,
    "Too Many Requests",
    "Rate limit exceeded (per key, per address, failed authentications or concurrent exports); see Retry-After",
    "Rate limit exceeded: 1200 requests per minute; retry in 12 seconds",
  ),
  500: errorResponse(
    500,
    "Internal Server Error",
    "Unexpected failure; details are logged with the request id, never answered",
    "Internal server error; retry in a couple of minutes",
  ),
  503: errorResponse(
    503,
    "Service Unavailable",
    "Database unavailable or server overloaded; see Retry-After",
    "Service temporarily unavailable; retry later",
  ),
};

/** What every route behind an API key can answer besides its own statuses. */
export const authenticatedErrors = {
  401: errorResponses[401],
  429: errorResponses[429],
  500: errorResponses[500],
  503: errorResponses[503],
};

/**
 * A route with a query string: its parameters are checked. `example` is one of its own
 * refusals, as the service words it.
 */
export const queryErrors = (example: { path: string; message: string }) => ({
  400: error(badRequestSchema, "Invalid query parameter (path names it)", fixed400([example])),
});

/** A route that takes a JSON body: checked, limited in size, JSON only. */
export const bodyErrors = {
  400: errorResponses[400],
  413: errorResponses[413],
  415: errorResponses[415],
};

/** The same for a body that is not a batch of reports (`example`: one of its refusals). */
export const objectBodyErrors = (example: { path: string; message: string }) => ({
  ...bodyErrors,
  400: error(badRequestSchema, "Invalid body: every problem, by field", fixed400([example])),
});

/**
 * A route that takes no body still reads one that is sent (an empty one, or none, is fine):
 * not JSON, malformed or too large, it is refused as any body is.
 */
export const unwantedBodyErrors = {
  400: error(
    badRequestSchema,
    "A body was sent and is not well-formed JSON (this operation takes none: send no body)",
    fixed400([{ message: "Malformed JSON body" }]),
  ),
  413: errorResponses[413],
  415: errorResponses[415],
};

/** The unauthenticated probes: limited per address, never shed (a 503 is "not ready"). */
export const probeErrors = { 429: errorResponses[429], 500: errorResponses[500] };

/** A route that takes an Idempotency-Key: another request holds it, or held it with other content. */
export const idempotencyErrors = { 409: errorResponses[409], 422: errorResponses[422] };
