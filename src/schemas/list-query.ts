import { z } from "zod";
import { QUALITY_FLAGS } from "../domain/quality.js";
import { dateSchema, reportItemSchema, reportOrganizationShape } from "./report.js";
import { storableText, wholeNumber } from "./text.js";

export const MAX_PAGE_SIZE = 500;

/** Digits a whole-number query parameter may have. */
const MAX_DIGITS = 9;

/** A query parameter holding a whole number from 1 to `max`. */
export const positiveInteger = (max: number, message: string) =>
  z
    .string()
    .regex(new RegExp(`^[0-9]{1,${MAX_DIGITS}}$`), message)
    // The pattern admits nothing longer; said as maxLength for the document's readers.
    .meta({ maxLength: MAX_DIGITS })
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, message);

/** Query of GET /api/v1/reports. Unknown parameters are ignored. */
export const listQuerySchema = z.object({
  baseCoinId: storableText(200)
    .optional()
    .meta({ description: "Only this base coin (project) id", example: "chainlink" }),
  exchangeId: storableText(200)
    .optional()
    .meta({ description: "Only this exchange id", example: "binance" }),
  // Not checked as text: a market maker's key ignores it, as any unknown parameter (its
  // listing must not change); for the others an id no organization has lists nothing.
  organizationId: z.string().optional().meta({
    description:
      "Only this organization's reports (project and operator keys; a market maker's key ignores it)",
    example: "acme",
  }),
  dateGte: dateSchema.optional().meta({
    description: "Only reports dated on or after this day (YYYY-MM-DD)",
    example: "2026-11-01",
  }),
  dateLte: dateSchema.optional().meta({
    description: "Only reports dated on or before this day (YYYY-MM-DD)",
    example: "2026-11-21",
  }),
  page: positiveInteger(999_999_999, "Expected a positive integer").optional().meta({
    description:
      "Page number, from 1 (default 1). With Accept: text/csv, that page only; without it, every matching report",
    example: "1",
  }),
  pageSize: positiveInteger(MAX_PAGE_SIZE, `Expected an integer from 1 to ${MAX_PAGE_SIZE}`)
    .optional()
    .meta({
      description: `Reports per page, 1 to ${MAX_PAGE_SIZE} (default ${MAX_PAGE_SIZE})`,
      example: "100",
    }),
  include: z.enum(["quality"]).optional().meta({
    description:
      "`quality`: each JSON item adds `qualityFlags` (CONTRACT section 6); CSV adds a last column `qualityFlags`, the flags separated by spaces. Any other value is ignored, like an unknown parameter",
    example: "quality",
  }),
});
export type ListQuery = z.infer<typeof listQuerySchema>;

/**
 * What the listing takes of a query's `include` (CONTRACT section 6) before validation:
 * `quality` when one of its values is (repeated or comma-separated), else nothing, so that any
 * other value is ignored like an unknown parameter (section 2).
 */
export function includeOf(value: unknown): "quality" | undefined {
  const values = [value].flat().flatMap((v) => (typeof v === "string" ? v.split(",") : []));
  return values.some((v) => v.trim() === "quality") ? "quality" : undefined;
}

export const reportPageSchema = z.object({
  page: wholeNumber().meta({ description: "This page's number, from 1" }),
  totalPages: wholeNumber().meta({ description: "Pages at this pageSize" }),
  totalCount: wholeNumber().meta({ description: "Reports matching the filters" }),
  items: z
    .array(
      z
        .object({
          organizationId: reportOrganizationShape.organizationId.optional(),
          organizationName: reportOrganizationShape.organizationName.optional(),
          ...reportItemSchema.shape,
          qualityFlags: z.array(z.enum(QUALITY_FLAGS)).max(QUALITY_FLAGS.length).optional().meta({
            description:
              "With include=quality only: the report's quality flags (empty when none); they never reject a record",
          }),
        })
        .meta({
          id: "ListedReport",
          description:
            "A report. Items of project and operator keys start with organizationId and organizationName; a market maker's items have neither",
        }),
    )
    .max(MAX_PAGE_SIZE),
});
