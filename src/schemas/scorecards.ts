import { z } from "zod";
import { EARLIEST_DATE, isCalendarDate } from "../domain/dates.js";
import { KPI_NAMES } from "../domain/obligation.js";
import { ELIGIBILITY_STATUSES, INSTRUMENT_TYPES } from "../domain/report.js";
import { dateSchema, storedDate } from "./report.js";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH, storableText, storedText, wholeNumber } from "./text.js";

/** The longest range a scorecard covers, in days (both ends included). */
export const MAX_SCORECARD_DAYS = 366;
/** Days covered when the query names no range: the 30 days ending yesterday (UTC). */
export const DEFAULT_SCORECARD_DAYS = 30;
/** The most market-days one /scorecards/daily answer holds (about 23 MB of JSON). */
export const MAX_DAILY_ITEMS = 100_000;

/** The last date a scorecard may cover: its deadline (the next day) must still be a date. */
const LATEST_SCORECARD_DATE = "9998-12-31";

// The bounds judge calendar dates only: anything else has its one problem from dateSchema.
const scorecardDate = dateSchema
  .refine(
    (date) => !isCalendarDate(date) || date >= EARLIEST_DATE,
    `Date must not be before ${EARLIEST_DATE}`,
  )
  .refine(
    (date) => !isCalendarDate(date) || date <= LATEST_SCORECARD_DATE,
    `Date must not be after ${LATEST_SCORECARD_DATE}`,
  );

/** Query of GET /api/v1/scorecards and /api/v1/scorecards/daily. Unknown parameters are ignored. */
export const scorecardQuerySchema = z.object({
  baseCoinId: storableText(200)
    .optional()
    .meta({ description: "Only obligations for this base coin", example: "chainlink" }),
  organizationId: storableText(200).optional().meta({
    description: "Only this market maker's obligations (within the caller's scope)",
    example: "helios-liquidity",
  }),
  dateGte: scorecardDate.optional().meta({
    description: `First day (YYYY-MM-DD, ${EARLIEST_DATE} to ${LATEST_SCORECARD_DATE}). Default: ${DEFAULT_SCORECARD_DAYS - 1} days before dateLte, not before ${EARLIEST_DATE}`,
    example: "2026-10-24",
  }),
  dateLte: scorecardDate.optional().meta({
    description: `Last day (YYYY-MM-DD, ${EARLIEST_DATE} to ${LATEST_SCORECARD_DATE}), at most ${MAX_SCORECARD_DAYS} days after dateGte. Default: yesterday (UTC)`,
    example: "2026-11-22",
  }),
});
export type ScorecardQuery = z.infer<typeof scorecardQuerySchema>;

const market = {
  organizationId: storedText(MAX_ID_LENGTH).meta({
    description: "The market maker",
    example: "helios-liquidity",
  }),
  organizationName: storedText(MAX_NAME_LENGTH).meta({ example: "Helios Liquidity" }),
  baseCoinId: storedText(MAX_ID_LENGTH).meta({ example: "zephyr-token" }),
  exchangeId: storedText(MAX_ID_LENGTH).meta({
    description: "As stored (after routing)",
    example: "orbit",
  }),
  quote: storedText(MAX_ID_LENGTH).meta({
    description: "The record key's quote: coin id, or upper-cased fiat symbol",
    example: "stable-dollar",
  }),
  instrumentType: z.enum(INSTRUMENT_TYPES),
};

const days = (description: string) => wholeNumber().meta({ description });

const depthShare = (description: string) =>
  z
    .number()
    .nullable()
    .meta({ description: `${description}, rounded to 4 decimals; null without a snapshot` });

const kpiCountsSchema = z.object({
  daysMet: days("Due reported days whose report met this KPI"),
  daysMissed: days("Due reported days whose report missed it (a null value misses)"),
});

export const scorecardItemSchema = z.object({
  ...market,
  daysDue: days("Days of the range inside the obligation whose deadline has passed"),
  daysReported: days("Due days with a report"),
  daysMissing: days("Due days without a report"),
  daysLate: days("Due days whose report was first accepted after the deadline"),
  daysEligible: days("Due days whose report is eligible (matched with market data)"),
  daysMet: days("Due days whose report met every KPI of its period"),
  compliance: z.number().nullable().meta({
    description: "daysMet / daysDue, rounded to 4 decimals; null when nothing is due",
  }),
  kpis: z.partialRecord(z.enum(KPI_NAMES), kpiCountsSchema).meta({
    description: "Each KPI set on some due reported day: of those days, how many met and missed it",
  }),
  daysFlagged: days("Due reported days whose report carries a quality flag (CONTRACT section 6)"),
  medianDepthShare200: z
    .object({
      bid: depthShare("bidDepth200 ÷ the public depth within −2 % (cost to move the price down)"),
      ask: depthShare("askDepth200 ÷ the public depth within +2 % (cost to move the price up)"),
    })
    .meta({
      description:
        "The share of the public order book the market maker reports, median over the due reported days with a public depth snapshot, per side; null without any",
    }),
});

export const scorecardsResponseSchema = z.object({
  dateGte: storedDate({ description: "First day of the range" }),
  dateLte: storedDate({ description: "Last day of the range" }),
  items: z.array(scorecardItemSchema).meta({
    description:
      "One per obligation market, by organizationId, baseCoinId, exchangeId, quote, instrumentType",
  }),
});

export const dailyScorecardItemSchema = z.object({
  date: storedDate({ description: "The day", example: "2026-11-22" }),
  ...market,
  status: z.enum(["pending", "missing", "met", "missed"]).meta({
    description:
      "pending until the day's deadline has passed (counted nowhere), then missing, met or missed",
  }),
  late: z.boolean().meta({ description: "First accepted after the deadline" }),
  failedKpis: z.array(z.enum(KPI_NAMES)).max(KPI_NAMES.length).meta({
    description: "The KPIs the report fails (also shown, as a preview, on a pending day)",
  }),
  eligibilityStatus: z
    .enum(ELIGIBILITY_STATUSES)
    .nullable()
    .meta({ description: "The report's eligibility; null without a report" }),
});

export const dailyScorecardsResponseSchema = z.object({
  dateGte: storedDate({ description: "First day of the range" }),
  dateLte: storedDate({ description: "Last day of the range" }),
  items: z
    .array(dailyScorecardItemSchema)
    .max(MAX_DAILY_ITEMS)
    .meta({
      description: `One per obligation market and day, by market then date; at most ${MAX_DAILY_ITEMS}`,
    }),
});

export type ScorecardsResponse = z.infer<typeof scorecardsResponseSchema>;
export type DailyScorecardsResponse = z.infer<typeof dailyScorecardsResponseSchema>;
