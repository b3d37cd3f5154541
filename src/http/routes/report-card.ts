import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { reportCardQuerySchema, reportCardSchema } from "../../schemas/report-card.js";
import type { Services } from "../../services/index.js";
import { authenticatedErrors, errorResponse, queryErrors } from "../openapi-responses.js";

const rate = (value: number | null, peerMedian: number | null) => ({ value, peerMedian });

const exampleCard = {
  organizationId: "acme",
  month: "2026-10",
  submissions: 62,
  rejectedSubmissions: 3,
  recordsAccepted: 18_200,
  recordsRejected: 410,
  problemsByCode: { unknown_base_coin: 2, date_not_past: 1 },
  problemsByField: { baseCoinId: 2, date: 1 },
  reportsDue: 155,
  reportsMissing: 2,
  reportsLate: 4,
  correctionsAfterDeadline: 1,
  qualityFlags: {},
  rates: {
    rejectedSubmissions: rate(0.0484, 0.02),
    rejectedRecords: rate(0.022, 0.011),
    missingReports: rate(0.0129, 0.0065),
    lateReports: rate(0.0258, 0.03),
    correctionsAfterDeadline: rate(0.0001, 0),
  },
  peers: { marketMakers: 7, mediansShown: true, note: null },
};

const schema = {
  operationId: "getReportCard",
  summary: "The caller's monthly report card, each rate beside the market makers' median",
  description:
    "A market maker's month (UTC): submissions and rejected ones, records accepted and rejected, problems by code and by field, obligation reports due, missing and late, corrections after the deadline and quality flags. Each rate is shown beside the median of the market makers reporting that month; with fewer than 3 of them every median is null and `peers` says why. Dry runs are not counted. Only market-maker keys have a report card (operators: `trading-reports report-card ORG`).",
  tags: ["submissions"],
  querystring: reportCardQuerySchema,
  response: {
    200: reportCardSchema.meta({ description: "The report card", examples: [exampleCard] }),
    ...queryErrors({ path: "month", message: "Month must not be in the future" }),
    403: errorResponse(
      403,
      "Forbidden",
      "A project or operator key",
      "Only market-maker keys have a report card",
    ),
    ...authenticatedErrors,
  },
};

export function reportCardRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    // A key without a report card gets its 403 whatever the query holds, as the submission
    // routes answer a key that may not submit before reading its body.
    const onRequest = async (request: FastifyRequest) =>
      services.assertHasReportCard(request.caller);
    app.get("/api/v1/report-card", { schema, onRequest }, (request) =>
      services.getReportCard(request.caller, request.query),
    );
  };
}
