import { z } from "zod";
import { isCalendarDate } from "../domain/dates.js";
import {
  ELIGIBILITY_REASONS,
  INSTRUMENT_TYPES,
  METRICS,
  type Metric,
  PERCENTAGE_METRICS,
  SUBMISSION_TYPES,
  V1_METRICS,
  type V1Metric,
  V2_ONLY_METRICS,
} from "../domain/report.js";
import "./zod-messages.js";
import { storableText } from "./text.js";

export const MAX_V2_BATCH = 300;
export const MAX_V1_BATCH = 1000;
const MAX_ID_LENGTH = 200;

export const dateSchema = z
  .string()
  .refine(isCalendarDate, "Invalid date, expected YYYY-MM-DD")
  .meta({ format: "date", example: "2026-11-21" });

const idSchema = storableText(MAX_ID_LENGTH);

function metricSchema(metric: Metric) {
  const base = z.number().min(0);
  return PERCENTAGE_METRICS.has(metric) ? base.max(100) : base;
}

const recordIdentity = {
  date: dateSchema,
  exchangeId: idSchema.meta({ example: "binance" }),
  baseCoinId: idSchema.meta({ example: "chainlink" }),
  quoteCoinId: idSchema.nullish().meta({ example: "tether" }),
  quoteCoinSymbol: idSchema.nullish().meta({ example: "USD" }),
};

function metricShape<const M extends readonly Metric[], S extends z.ZodType>(
  metrics: M,
  schemaOf: (metric: Metric) => S,
): { [K in M[number]]: S } {
  return Object.fromEntries(metrics.map((m) => [m, schemaOf(m)])) as { [K in M[number]]: S };
}

/** One record of a v2 submission (spec 2.1): every metric required. */
export const v2RecordSchema = z.object({
  ...recordIdentity,
  ...metricShape(METRICS, metricSchema),
  instrumentType: z.enum(INSTRUMENT_TYPES),
  type: z.enum(SUBMISSION_TYPES),
});

const V1_DEFAULTS: Record<V1Metric, number> = {
  ...(Object.fromEntries(V1_METRICS.map((m) => [m, 0])) as Record<V1Metric, number>),
  bidAskSpread: 100,
};

/** One record of a v1 submission (spec 2.2): metrics optional with defaults, null refused. */
export const v1RecordSchema = z.object({
  ...recordIdentity,
  ...metricShape(V1_METRICS, (m) => metricSchema(m).default(V1_DEFAULTS[m as V1Metric])),
});

export type V2Record = z.infer<typeof v2RecordSchema>;
export type V1Record = z.infer<typeof v1RecordSchema>;

export function submissionBodySchema(record: z.ZodType, maxRecords: number) {
  return z.object({ data: z.array(record).min(1).max(maxRecords) });
}

export const submissionResultSchema = z.object({
  createdCount: z.number().int().meta({ example: 290 }),
  updatedCount: z.number().int().meta({ example: 10 }),
});
export type SubmissionResult = z.infer<typeof submissionResultSchema>;

const nullableMetrics = metricShape(V2_ONLY_METRICS, () => z.number().nullable());

/** One item of the report listing (spec 2.3). */
export const reportItemSchema = z.object({
  date: z.string(),
  exchangeId: z.string(),
  exchangeName: z.string(),
  baseCoinId: z.string(),
  baseCoinSymbol: z.string(),
  quoteCoinId: z.string().optional(),
  quoteCoinSymbol: z.string().optional(),
  ...metricShape(V1_METRICS, () => z.number()),
  type: z.enum(SUBMISSION_TYPES).nullable(),
  ...nullableMetrics,
  eligibilityStatus: z.enum(["eligible", "ineligible_market_data_missing"]),
  eligibilityReason: z.enum(ELIGIBILITY_REASONS).nullable(),
});
export type ReportItem = z.infer<typeof reportItemSchema>;

/**
 * One row of the CSV export: a listing item plus its `instrumentType`, so that an exported
 * file can be submitted again as it is (the JSON listing keeps the specification's fields).
 */
export const reportCsvItemSchema = reportItemSchema.extend({
  instrumentType: z.enum(INSTRUMENT_TYPES),
});
export type ReportCsvItem = z.infer<typeof reportCsvItemSchema>;
