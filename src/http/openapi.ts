import type { FastifyDynamicSwaggerOptions } from "@fastify/swagger";
import { jsonSchemaTransform } from "fastify-type-provider-zod";
import type { z } from "zod";
import { badRequestSchema, errorSchema, unauthorizedSchema } from "../schemas/reference.js";

/**
 * The OpenAPI 3.1 document is generated from the routes: each route declares its Zod request
 * and response schemas (with their descriptions and examples) once, and this adds only what
 * belongs to the whole API.
 */
export const openApiOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: "3.1.0",
    info: {
      title: "trading-reports",
      version: "1.0.0",
      description:
        "Daily trading-metric reports of market makers: submit (v1, v2), validate, match with market data, list. Authenticate with `Authorization: <API key>` (or `Bearer <API key>`). Monetary and volume values are in USD; percentages are 0 to 100 (0.5 means 0.5 %); bps are basis points.",
    },
    components: {
      securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "Authorization" } },
    },
    security: [{ apiKey: [] }],
    tags: [
      { name: "reports" },
      { name: "obligations" },
      { name: "scorecards" },
      { name: "reference data" },
      { name: "operations" },
    ],
  },
  transform: jsonSchemaTransform,
};

const error = (schema: z.ZodType, description: string, example: unknown) =>
  schema.meta({ description, examples: [example] });

const fixed400 = (message: { path: string; message: string }[]) => ({
  statusCode: 400,
  error: "Bad Request",
  message,
});

const fixed = (statusCode: number, text: string, message: string) => ({
  statusCode,
  error: text,
  message,
});

/** A 400 for a bad query parameter. */
export const badQueryResponse = error(
  badRequestSchema,
  "Invalid query parameter (path names it)",
  fixed400([{ path: "pageSize", message: "Expected an integer from 1 to 500" }]),
);

/** The error responses routes declare (CONTRACT section 2), each with an example. */
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
  403: error(
    errorSchema,
    "The key belongs to a project or the operator: it reads, it does not submit",
    fixed(403, "Forbidden", "This API key cannot submit reports"),
  ),
  413: error(
    errorSchema,
    "Body over the size limit",
    fixed(413, "Payload Too Large", "Request body is larger than the limit"),
  ),
  415: error(
    errorSchema,
    "Body is not JSON",
    fixed(415, "Unsupported Media Type", "Unsupported Media Type: send application/json"),
  ),
  429: error(
    errorSchema,
    "Rate limit exceeded; see Retry-After",
    fixed(
      429,
      "Too Many Requests",
      "Rate limit exceeded: 1200 requests per minute; retry in 1 minute",
    ),
  ),
  503: error(
    errorSchema,
    "Database unavailable or server overloaded; see Retry-After",
    fixed(503, "Service Unavailable", "Service temporarily unavailable; retry later"),
  ),
};
