import type { FastifyInstance, FastifyRequest } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import { readScope } from "../../domain/caller.js";
import { ValidationError } from "../../domain/errors.js";
import type { SchemaVersion } from "../../domain/report.js";
import { exampleReportPage, exampleV1Record, exampleV2Record } from "../../schemas/examples.js";
import { idempotencyKeySchema } from "../../schemas/idempotency.js";
import { includeOf, listQuerySchema, reportPageSchema } from "../../schemas/list-query.js";
import {
  MAX_V1_BATCH,
  MAX_V2_BATCH,
  type ReportCsvItem,
  reportOrganizationShape,
  submissionBodySchema,
  submissionResultSchema,
  v1RecordSchema,
  v2RecordSchema,
} from "../../schemas/report.js";
import type { Services } from "../../services/index.js";
import { hashBodyOfKeyedRequest, idempotencyOf, sendIdempotent } from "../idempotency.js";
import { prefersCsv } from "../negotiate.js";
import {
  authenticatedErrors,
  bodyErrors,
  errorResponses,
  idempotencyErrors,
  queryErrors,
} from "../openapi-responses.js";
import { REPORT_CSV_COLUMNS, reportCsvStream, reportCsvText } from "../report-csv.js";
import { submissionFeedback, submissionLogged, submissionOf } from "../submission-feedback.js";

const submission = {
  1: { record: v1RecordSchema, max: MAX_V1_BATCH, example: exampleV1Record },
  2: { record: v2RecordSchema, max: MAX_V2_BATCH, example: exampleV2Record },
};

const submissionHeaders = z.object({
  // Documented only (zod-validation.ts): `dryRunOf` reads it, in any case.
  "x-dry-run": z
    .string()
    .regex(/^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])$/)
    .optional()
    .meta({
      maxLength: 5,
      description:
        "`true`: validate and count, store nothing. `true`/`false` in any case; anything else is a 400.",
      example: "true",
    }),
  "idempotency-key": idempotencyKeySchema.optional(),
});

function submissionSchema(version: SchemaVersion) {
  const { record, max, example } = submission[version];
  return {
    operationId: `submitReportsV${version}`,
    summary: `Submit v${version} reports (1 to ${max} records)`,
    description:
      "Validates the whole batch, then creates or updates every record atomically: on any problem nothing is stored. A record key is date, exchange, base coin, quote coin (and instrument type in v2).",
    tags: ["reports"],
    // Documented here, checked by the service: every problem of a batch comes back at once,
    // in record order, with the specified texts (see zod-validation.ts).
    headers: submissionHeaders,
    body: submissionBodySchema(record, max).meta({ examples: [{ data: [example] }] }),
    response: {
      201: submissionResultSchema.meta({
        description: "Stored (or, in a dry run, would be stored)",
        examples: [{ createdCount: 1, updatedCount: 0 }],
      }),
      ...bodyErrors,
      403: errorResponses[403],
      ...idempotencyErrors,
      ...authenticatedErrors,
    },
  };
}

/** The CSV of the listing's example page (with its instrument type), as the export writes it. */
const exampleCsv = reportCsvText(
  exampleReportPage.items.map((item) => ({ ...item, instrumentType: "spot" }) as ReportCsvItem),
);

const listSchema = {
  operationId: "listReports",
  summary: "List the caller's reports of projects with an active engagement",
  description:
    "Ordered by date descending, exchangeId, baseCoinId, quote and instrument type. `Accept: text/csv` (preferred by its q-value over application/json) streams every matching report as CSV. A project key reads every market maker's reports for its coins, dated inside an engagement of that market maker for the coin (ended ones included); an operator key reads every report. Their items (and CSV rows) start with `organizationId` and `organizationName`, `organizationId` filters, and the order puts organizationId after baseCoinId.",
  tags: ["reports"],
  querystring: listQuerySchema,
  response: {
    200: {
      description: "One page (JSON), or the matching reports (CSV)",
      content: {
        "application/json": { schema: reportPageSchema.meta({ examples: [exampleReportPage] }) },
        "text/csv": {
          schema: z.string().meta({
            description: `RFC 4180 CSV: a header row, then one row per report. Columns: ${REPORT_CSV_COLUMNS.join(", ")}. Leading columns of project and operator keys: ${Object.keys(reportOrganizationShape).join(", ")}. Trailing column with include=quality: qualityFlags. Quality flags are separated by spaces. Empty cells are nulls and absent fields.`,
            examples: [exampleCsv],
          }),
        },
      },
    },
    ...queryErrors({ path: "pageSize", message: "Expected an integer from 1 to 500" }),
    ...authenticatedErrors,
  },
};

export function reportRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    for (const version of [1, 2] as SchemaVersion[]) {
      app.post(
        `/api/v${version}/report`,
        // After authentication (the instance's hook), before the body is read or checked:
        // a project or operator key gets its 403 whatever it sends, dry run or not.
        {
          schema: submissionSchema(version),
          ...submissionFeedback(services, version),
          preParsing: hashBodyOfKeyedRequest,
        },
        async (request, reply) => {
          const dryRun = dryRunOf(request.headers["x-dry-run"]);
          const submitted = { version, body: request.body, dryRun, ...submissionOf(request) };
          const idempotency = idempotencyOf(request, reply, submitted);
          if (idempotency !== undefined) {
            const answer = await services.submitReportsIdempotently(
              request.caller,
              submitted,
              idempotency,
            );
            // A replay names the submission that was kept (its stored header), no new one.
            if (!answer.replayed) submissionLogged(request);
            return sendIdempotent(reply, answer);
          }
          const result = await services.submitReports(request.caller, submitted);
          submissionLogged(request);
          return reply.code(201).send(result);
        },
      );
    }
    app.get(
      "/api/v1/reports",
      { schema: listSchema, preValidation: ignoreUnknownAdditions },
      async (request, reply) => {
        if (!prefersCsv(request.headers.accept)) {
          const page = await services.listReportsJson(request.caller, request.query);
          return reply.type("application/json; charset=utf-8").send(page);
        }
        const chunks = services.exportReports(request.caller, request.query);
        // The first chunk is read before answering, so that a failure still gets a proper status.
        const first = await services.guard(() => chunks.next());
        return reply
          .header("content-type", "text/csv; charset=utf-8")
          .header("content-disposition", 'attachment; filename="reports.csv"')
          .send(
            reportCsvStream(
              first,
              chunks,
              readScope(request.caller).kind !== "organization",
              request.query.include === "quality",
            ),
          );
      },
    );
  };
}

/**
 * What the listing takes of its additions (CONTRACT sections 4 and 6) before validation, so
 * that a market maker's listing answers exactly as in section 2, where unknown parameters are
 * ignored:
 * - a market maker's key ignores `organizationId` (a repeated one included);
 * - `include` holds `quality` or is dropped: any other value (`include=foo`, `QUALITY`) is
 *   ignored like an unknown parameter, and a repeated or comma-separated one counts when one
 *   of its values is `quality`.
 */
async function ignoreUnknownAdditions(request: FastifyRequest): Promise<void> {
  const query = request.query as Record<string, unknown>;
  if (readScope(request.caller).kind === "organization")
    Reflect.deleteProperty(query, "organizationId");
  if (query.include === undefined) return;
  const include = includeOf(query.include);
  if (include === undefined) Reflect.deleteProperty(query, "include");
  else query.include = include;
}

/** `x-dry-run`: true or false in any case, or absent; anything else must not persist silently. */
function dryRunOf(header: string | string[] | undefined): boolean {
  if (header === undefined) return false;
  const value = typeof header === "string" ? header.trim().toLowerCase() : "";
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ValidationError([{ path: "x-dry-run", message: "Expected 'true' or 'false'" }]);
}
