import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import {
  submissionDetailSchema,
  submissionPageSchema,
  submissionParamsSchema,
  submissionsQuerySchema,
} from "../../schemas/submissions.js";
import type { Services } from "../../services/index.js";
import { authenticatedErrors, errorResponse, queryErrors } from "../openapi-responses.js";

const exampleSubmission = {
  id: "0b9f6c1e-3c1a-4d47-9a53-3f0a1c2b7d10",
  receivedAt: "2026-11-22T09:15:02.113Z",
  apiVersion: 2,
  dryRun: false,
  status: "rejected",
  recordCount: 2,
  createdCount: 0,
  updatedCount: 0,
  problemCount: 1,
  keyPrefix: "trk_3fA9",
  idempotencyKey: "batch-2026-11-21-01",
};

const scopeNote =
  "A key sees its own organization's submissions only (project and operator keys do not submit: their log holds only their refused attempts, each a 403 with the code key_may_not_submit).";

const list = {
  operationId: "listSubmissions",
  summary: "The caller's submissions: accepted, rejected and dry runs, newest first",
  description: `Every authenticated request to a submission endpoint that was decided (201, 400, 403, 409, 413, 415, 422), kept SUBMISSION_LOG_DAYS days. dateGte and dateLte filter on the UTC day it was received. ${scopeNote}`,
  tags: ["submissions"],
  querystring: submissionsQuerySchema,
  response: {
    200: submissionPageSchema.meta({
      description: "One page of the log",
      examples: [{ page: 1, totalPages: 1, totalCount: 1, items: [exampleSubmission] }],
    }),
    ...queryErrors({
      path: "status",
      message: "Invalid enum value. Expected 'accepted' | 'rejected', received 'pending'",
    }),
    ...authenticatedErrors,
  },
};

const notFound = errorResponse(
  404,
  "Not Found",
  "No submission of the caller's organization has this id",
  "Submission not found",
);

const detail = {
  operationId: "getSubmission",
  summary: "One submission with the problems it was answered, each with its code",
  description: `The submission and its problems as the 400 answered them (the first 1,000; problemCount has them all), each with a stable \`code\` from the catalogue (see ProblemCode). ${scopeNote}`,
  tags: ["submissions"],
  params: submissionParamsSchema,
  response: {
    200: submissionDetailSchema.meta({
      description: "The submission",
      examples: [
        {
          ...exampleSubmission,
          problems: [
            {
              path: "data.1.baseCoinId",
              message: "Base coin with id 'chainlnk' does not match any valid ticker id",
              code: "unknown_base_coin",
            },
          ],
        },
      ],
    }),
    404: notFound,
    ...authenticatedErrors,
  },
};

export function submissionRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get("/api/v1/submissions", { schema: list }, (request) =>
      services.listSubmissions(request.caller, request.query),
    );
    app.get("/api/v1/submissions/:id", { schema: detail }, (request) =>
      services.getSubmission(request.caller, request.params.id),
    );
  };
}
