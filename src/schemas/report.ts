import { z } from "zod";
import { isCalendarDate } from "../domain/dates.js";
import {
  ELIGIBILITY_REASONS,
  ELIGIBILITY_STATUSES,
  type EligibilityReason,
  INSTRUMENT_TYPES,
  METRICS,
  type Metric,
  PERCENTAGE_METRICS,
  SUBMISSION_TYPES,
  V1_METRICS,
  type V1Metric,
  V2_ONLY_METRICS,
} from "../domain/report.js";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH, storableText, storedText, wholeNumber } from "./text.js";

export const MAX_V2_BATCH = 300;
export const MAX_V1_BATCH = 1000;

/** A date is YYYY-MM-DD: `isCalendarDate` admits nothing longer. */
export const DATE_LENGTH = "YYYY-MM-DD".length;

export const INVALID_DATE = "Invalid date, expected YYYY-MM-DD";

export const dateSchema = z
  .string()
  .refine(isCalendarDate, INVALID_DATE)
  .meta({ format: "date", maxLength: DATE_LENGTH, example: "2026-11-21" });

/** A date of an answer (checked by `dateSchema` on its way in). */
export const storedDate = (meta: { description: string; example?: string }) =>
  z.string().meta({ format: "date", maxLength: DATE_LENGTH, ...meta });

const idSchema = storableText(MAX_ID_LENGTH);

const depth = (band: string) =>
  `Depth at ${band}, in USD (bps: basis points from the mid price; 50 bps = 0.5 %)`;

/** What each metric means and its unit (spec 2.1): every consumer of the schema sees it. */
export const METRIC_DESCRIPTIONS: Record<Metric, string> = {
  bidDepth50: `Bid ${depth("50 bps")}`,
  askDepth50: `Ask ${depth("50 bps")}`,
  bidDepth100: `Bid ${depth("100 bps")}`,
  askDepth100: `Ask ${depth("100 bps")}`,
  bidDepth200: `Bid ${depth("200 bps")}`,
  askDepth200: `Ask ${depth("200 bps")}`,
  bidAskDepth50: `Total (bid + ask) ${depth("50 bps")}; bid and ask separately are preferred`,
  bidAskDepth100: `Total (bid + ask) ${depth("100 bps")}; bid and ask separately are preferred`,
  bidAskDepth200: `Total (bid + ask) ${depth("200 bps")}; bid and ask separately are preferred`,
  bidAskSpread: "Bid-ask spread as a percentage, 0 to 100: 0.5 means 0.5 % (not 0.005)",
  orderFillVolumeMaker: "Maker order fill volume, in USD",
  orderFillVolumeTaker: "Taker order fill volume, in USD",
  bidDepthTob: "Bid depth at the top of book, in USD",
  bidDepth10: `Bid ${depth("10 bps")}`,
  bidDepth25: `Bid ${depth("25 bps")}`,
  askDepthTob: "Ask depth at the top of book, in USD",
  askDepth10: `Ask ${depth("10 bps")}`,
  askDepth25: `Ask ${depth("25 bps")}`,
  topOfBookPercentage:
    "Share of instances the market maker was top of book, as a percentage, 0 to 100: 0.5 means 0.5 %",
  orderFillVolumeMakerTob: "Maker fill volume executed from the top of book, in USD",
};

function metricSchema(metric: Metric) {
  const base = z.number().min(0);
  return (PERCENTAGE_METRICS.has(metric) ? base.max(100) : base).meta({
    description: METRIC_DESCRIPTIONS[metric],
  });
}

const QUOTE_RULE =
  "At least one of quoteCoinId and quoteCoinSymbol; when quoteCoinId is set it decides the quote";

const recordIdentity = {
  date: dateSchema.meta({ description: "Trading date (UTC), YYYY-MM-DD" }),
  exchangeId: idSchema.meta({
    example: "binance",
    description: "Exchange id (GET /api/v1/exchanges)",
  }),
  baseCoinId: idSchema.meta({ example: "chainlink", description: "Base coin (project) id" }),
  quoteCoinId: idSchema.nullish().meta({
    example: "tether",
    description: `Quote coin id, for pairs against crypto. ${QUOTE_RULE}`,
  }),
  quoteCoinSymbol: idSchema.nullish().meta({
    example: "USD",
    description: `Quote symbol, for pairs against fiat, stored upper case: at most ${MAX_ID_LENGTH} characters once upper-cased (ß is SS), so that an export can be submitted again. ${QUOTE_RULE}`,
  }),
};

const instrumentTypeSchema = z
  .enum(INSTRUMENT_TYPES)
  .meta({ description: "spot, or perp (perpetual futures)" });
const submissionTypeSchema = z.enum(SUBMISSION_TYPES).meta({
  description:
    "project: loan plus call option, or retainer plus working capital engagements; exchange: exchange engagements; prop: prop trading",
});

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
  instrumentType: instrumentTypeSchema,
  type: submissionTypeSchema,
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
  createdCount: wholeNumber().meta({ example: 290, description: "Records new to their key" }),
  updatedCount: wholeNumber().meta({
    example: 10,
    description: "Records that replaced the last version of their key",
  }),
});
export type SubmissionResult = z.infer<typeof submissionResultSchema>;

const nullableMetrics = metricShape(V2_ONLY_METRICS, (m) =>
  z
    .number()
    .nullable()
    .meta({ description: `${METRIC_DESCRIPTIONS[m]}. Null for a report submitted through v1` }),
);

/** Why a report is ineligible (spec section 3), in order of precedence. */
export const ELIGIBILITY_REASON_DESCRIPTIONS: Record<EligibilityReason, string> = {
  exchange_market_data_missing: "No market data is collected for the exchange",
  base_not_traded: "The base coin is not traded on the exchange (for this instrument type)",
  pair_not_found: "The pair (base and quote) does not exist on the exchange",
  before_collection_start: "The report's date is before market data collection began for the pair",
};

const eligibilityReasonSchema = z
  .enum(ELIGIBILITY_REASONS)
  .nullable()
  .meta({
    description: `Null when eligible. ${ELIGIBILITY_REASONS.map((r) => `${r}: ${ELIGIBILITY_REASON_DESCRIPTIONS[r]}`).join("; ")}`,
  });

/**
 * A submitted quoteCoinSymbol is stored upper-cased, and upper-casing lengthens a string up to
 * three times (U+0390 becomes three code units). Submissions now hold the stored symbol to
 * MAX_ID_LENGTH (storedSymbolProblem); reports stored before that may be longer.
 */
const MAX_UPPER_CASED_ID_LENGTH = 3 * MAX_ID_LENGTH;

/** One item of the report listing (spec 2.3). */
export const reportItemSchema = z
  .object({
    date: storedDate({ description: "Trading date, YYYY-MM-DD" }),
    exchangeId: storedText(MAX_ID_LENGTH),
    // Reference data: from a fixture (at most MAX_NAME_LENGTH / MAX_SYMBOL_LENGTH) or from
    // CoinGecko, stored as CoinGecko names it (no limit of the service's own).
    exchangeName: z.string(),
    baseCoinId: storedText(MAX_ID_LENGTH),
    baseCoinSymbol: z.string(),
    quoteCoinId: storedText(MAX_ID_LENGTH)
      .optional()
      .meta({ description: "Present when submitted" }),
    quoteCoinSymbol: storedText(MAX_UPPER_CASED_ID_LENGTH)
      .optional()
      .meta({ description: "Present when submitted; upper case" }),
    ...metricShape(V1_METRICS, (m) => z.number().meta({ description: METRIC_DESCRIPTIONS[m] })),
    type: submissionTypeSchema.nullable(),
    ...nullableMetrics,
    eligibilityStatus: z.enum(ELIGIBILITY_STATUSES).meta({
      description:
        "eligible: matched with market data; ineligible_market_data_missing: see eligibilityReason",
    }),
    eligibilityReason: eligibilityReasonSchema,
  })
  .meta({ id: "Report" });
export type ReportItem = z.infer<typeof reportItemSchema>;

/**
 * One row of the CSV export: a listing item plus its `instrumentType`, so that an exported
 * file can be submitted again as it is (the JSON listing keeps the specification's fields).
 */
export const reportCsvItemSchema = reportItemSchema.extend({
  instrumentType: z.enum(INSTRUMENT_TYPES),
  // The quality flags separated by spaces: written only with include=quality.
  qualityFlags: z.string().optional(),
});
export type ReportCsvItem = z.infer<typeof reportCsvItemSchema>;

/**
 * The fields a project or operator key's listing items start with (CONTRACT section 4): they
 * read the reports of several organizations. A market maker's items have neither.
 */
export const reportOrganizationShape = {
  organizationId: storedText(MAX_ID_LENGTH).meta({
    description: "The market maker that submitted the report (project and operator keys only)",
  }),
  organizationName: storedText(MAX_NAME_LENGTH).meta({
    description: "Its display name (project and operator keys only)",
  }),
};

export type ScopedReportCsvItem = ReportCsvItem & {
  organizationId: string;
  organizationName: string;
};
