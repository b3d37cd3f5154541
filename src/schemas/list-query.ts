import { z } from "zod";
import { QUALITY_FLAGS } from "../domain/quality.js";
import { dateSchema, reportItemSchema, reportOrganizationShape } from "./report.js";
import { storableText, wholeNumber } from "./text.js";

export const MAX_PAGE_SIZE = 500;

/** Digits a whole-number query parameter may have. */
const MAX_DIGITS = 9;

/** A query parameter of 1 to `count` decimal digits whose number is at least 1, as a number. */
const positiveDigits = (count: number, message: string) =>
  z
    .string()
    .regex(new RegExp(`^[0-9]{1,${count}}$`), message)
    // The document says what is accepted, zeros refused, in one pattern portable to every
    // JSON Schema validator (no look-ahead), with the length as maxLength.
    .meta({ pattern: "^0*[1-9][0-9]*$", maxLength: count })
    .transform(Number)
    .refine((n) => n >= 1, message);

/** A query parameter holding a whole number from 1 to `max`. */
export const positiveInteger = (max: number, message: string) =>
  positiveDigits(MAX_DIGITS, message).refine((n) => n <= max, message);

/** Digits a listing's page may have: any page a client may ask for; a silly length is a 400. */
const MAX_PAGE_DIGITS = 30;

/**
 * The largest page a listing answers as asked: 2^53 - 1, the largest integer every JSON reader
 * holds exactly (the response's `page` is a JSON number). A larger page lies past the end of
 * any listing, as this one does, and is answered as this page.
 */
const MAX_PAGE = Number.MAX_SAFE_INTEGER;

/**
 * A listing's page: any whole number from 1, since a page past the end is a 200 with no items
 * (CONTRACT section 2), read as at most MAX_PAGE.
 */
const pageNumber = (message: string) =>
  positiveDigits(MAX_PAGE_DIGITS, message).transform((n) => Math.min(n, MAX_PAGE));

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
  page: pageNumber("Expected a positive integer")
    .optional()
    .meta({
      description: `Page number, from 1 (default 1); a page past the last has no items. A page above ${MAX_PAGE} (2^53 - 1) is answered as page ${MAX_PAGE}. With Accept: text/csv, that page only; without it, every matching report`,
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
  page: wholeNumber().meta({
    description: `This page's number, from 1: the page asked for, or ${MAX_PAGE} for a larger one`,
  }),
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
