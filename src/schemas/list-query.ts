import { z } from "zod";
import { dateSchema, reportItemSchema } from "./report.js";
import { storableText } from "./text.js";

export const MAX_PAGE_SIZE = 500;

/** A query parameter holding a whole number from 1 to `max`. */
export const positiveInteger = (max: number, message: string) =>
  z
    .string()
    .regex(/^[0-9]{1,9}$/, message)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, message);

/** Query of GET /api/v1/reports. Unknown parameters are ignored. */
export const listQuerySchema = z.object({
  baseCoinId: storableText(200).optional(),
  exchangeId: storableText(200).optional(),
  dateGte: dateSchema.optional(),
  dateLte: dateSchema.optional(),
  page: positiveInteger(999_999_999, "Expected a positive integer").optional(),
  pageSize: positiveInteger(
    MAX_PAGE_SIZE,
    `Expected an integer from 1 to ${MAX_PAGE_SIZE}`,
  ).optional(),
});
export type ListQuery = z.infer<typeof listQuerySchema>;

export const reportPageSchema = z.object({
  page: z.number().int(),
  totalPages: z.number().int(),
  totalCount: z.number().int(),
  items: z.array(reportItemSchema),
});
export type ReportPage = z.infer<typeof reportPageSchema>;
