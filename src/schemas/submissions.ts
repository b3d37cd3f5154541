import { z } from "zod";
import { PROBLEM_CODE_NAMES, PROBLEM_CODES } from "../domain/problem-codes.js";
import { MAX_PAGE_SIZE, positiveInteger } from "./list-query.js";
import { dateSchema } from "./report.js";
import { pathId, storedText, wholeNumber } from "./text.js";

export const DEFAULT_SUBMISSIONS_PAGE_SIZE = 100;
/** What an Idempotency-Key may be (CONTRACT section 5): 1 to 255 printable ASCII characters. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/** Problems stored per submission; `problemCount` holds the exact number. */
export const MAX_STORED_PROBLEMS = 1000;
const MAX_PATH_LENGTH = 300;
/** A message may quote the offending value: what the log keeps of it is bounded. */
export const MAX_STORED_MESSAGE_LENGTH = 1000;
const UUID_LENGTH = 36;
const MAX_PAGE = 999_999_999;
const SUBMISSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** `before` that is not one of the caller's submissions: malformed, unknown or another's. */
export const BEFORE_MESSAGE = "Expected the id of one of the organization's submissions";
const TIMESTAMP_LENGTH = "2026-11-22T09:15:02.113Z".length;
/** Generated key prefixes: `trk_` and a few characters. */
const MAX_KEY_PREFIX_LENGTH = 20;

/** Query of GET /api/v1/submissions. Unknown parameters are ignored. */
export const submissionsQuerySchema = z.object({
  dateGte: dateSchema.optional().meta({
    description: "Only submissions received on or after this day (UTC, YYYY-MM-DD)",
    example: "2026-11-01",
  }),
  dateLte: dateSchema.optional().meta({
    description: "Only submissions received on or before this day (UTC, YYYY-MM-DD)",
    example: "2026-11-22",
  }),
  status: z
    .enum(["accepted", "rejected"])
    .optional()
    .meta({ description: "Only accepted or only rejected submissions", example: "rejected" }),
  before: z
    .string()
    .refine((value) => SUBMISSION_ID.test(value), BEFORE_MESSAGE)
    .meta({ format: "uuid", maxLength: UUID_LENGTH })
    .optional()
    .meta({
      description:
        "Only submissions older than this one of the caller's (its id): pass the last id of a page to get the next one unchanged by submissions received meanwhile",
      example: "6f1f3c2e-2b7a-4c38-9a51-8d0f4b6e2a10",
    }),
  page: positiveInteger(MAX_PAGE, `Expected an integer from 1 to ${MAX_PAGE}`)
    .optional()
    .meta({ description: "Page number, from 1 (default 1)", example: "1" }),
  pageSize: positiveInteger(MAX_PAGE_SIZE, `Expected an integer from 1 to ${MAX_PAGE_SIZE}`)
    .optional()
    .meta({
      description: `Submissions per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_SUBMISSIONS_PAGE_SIZE})`,
      example: "50",
    }),
});
export type SubmissionsQuery = z.infer<typeof submissionsQuerySchema>;

export const submissionParamsSchema = z.object({
  id: pathId("The submission's id (its x-submission-id)"),
});

export const problemCodeSchema = z.enum(PROBLEM_CODE_NAMES).meta({
  id: "ProblemCode",
  description: `The rule the problem breaks, from a stable catalogue: ${PROBLEM_CODE_NAMES.map((c) => `${c}: ${PROBLEM_CODES[c]}`).join("; ")}`,
});

export const submissionItemSchema = z
  .object({
    id: storedText(UUID_LENGTH).meta({
      format: "uuid",
      description: "The x-submission-id header of its answer",
    }),
    receivedAt: storedText(TIMESTAMP_LENGTH).meta({
      format: "date-time",
      description: "When the service received it (UTC)",
    }),
    apiVersion: z.union([z.literal(1), z.literal(2)]).meta({ description: "v1 or v2 endpoint" }),
    dryRun: z.boolean().meta({ description: "x-dry-run: true (nothing was stored)" }),
    status: z.enum(["accepted", "rejected"]),
    recordCount: wholeNumber().meta({
      description: "Records in the batch (0 when the body was not a batch at all)",
    }),
    createdCount: wholeNumber().meta({ description: "Records new to their key (0 if rejected)" }),
    updatedCount: wholeNumber().meta({ description: "Records that replaced a version" }),
    problemCount: wholeNumber().meta({ description: "Problems answered (all of them)" }),
    keyPrefix: storedText(MAX_KEY_PREFIX_LENGTH)
      .nullable()
      .meta({ description: "Prefix of the API key used; null for keys without one" }),
    idempotencyKey: storedText(MAX_IDEMPOTENCY_KEY_LENGTH)
      .nullable()
      .meta({ description: "The request's Idempotency-Key header, if valid" }),
  })
  .meta({ id: "Submission" });

export const submissionPageSchema = z.object({
  page: wholeNumber().meta({ description: "This page's number, from 1" }),
  totalPages: wholeNumber().meta({ description: "Pages at this pageSize" }),
  totalCount: wholeNumber().meta({ description: "Submissions matching the filters" }),
  items: z.array(submissionItemSchema).max(MAX_PAGE_SIZE),
});
export type SubmissionPage = z.infer<typeof submissionPageSchema>;

export const submissionDetailSchema = submissionItemSchema
  .extend({
    problems: z
      .array(
        z.object({
          path: storedText(MAX_PATH_LENGTH)
            .nullable()
            .meta({ description: "As answered; null for a problem of the whole body" }),
          message: storedText(MAX_STORED_MESSAGE_LENGTH).meta({
            description: `As answered (a message quoting a long value is cut at ${MAX_STORED_MESSAGE_LENGTH} characters)`,
          }),
          code: problemCodeSchema,
        }),
      )
      .max(MAX_STORED_PROBLEMS)
      .meta({
        description: `The problems answered, in order: the first ${MAX_STORED_PROBLEMS} (problemCount has them all)`,
      }),
  })
  .meta({ id: "SubmissionDetail" });
export type SubmissionDetail = z.infer<typeof submissionDetailSchema>;
