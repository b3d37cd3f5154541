import type { FastifyInstance } from "fastify";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  type DailyScorecardsResponse,
  dailyScorecardsResponseSchema,
  MAX_DAILY_ITEMS,
  MAX_SCORECARD_DAYS,
  type ScorecardsResponse,
  scorecardQuerySchema,
  scorecardsResponseSchema,
} from "../../schemas/scorecards.js";
import type { Services } from "../../services/index.js";
import {
  DAILY_SCORECARD_CSV_COLUMNS,
  dailyScorecardCsvLines,
  SCORECARD_CSV_COLUMNS,
  scorecardCsvLines,
} from "../../services/scorecard-csv.js";
import { prefersCsv } from "../negotiate.js";
import { authenticatedErrors, queryErrors } from "../openapi-responses.js";
import { csvText, sendDailyScorecardsCsv, sendScorecardsCsv } from "../scorecard-csv-answer.js";

const market = {
  organizationId: "helios-liquidity",
  organizationName: "Helios Liquidity",
  baseCoinId: "zephyr-token",
  exchangeId: "orbit",
  quote: "stable-dollar",
  instrumentType: "spot" as const,
};

const exampleScorecards: ScorecardsResponse = {
  dateGte: "2026-10-24",
  dateLte: "2026-11-22",
  items: [
    {
      ...market,
      daysDue: 30,
      daysReported: 28,
      daysMissing: 2,
      daysLate: 3,
      daysEligible: 27,
      daysMet: 25,
      compliance: 0.8333,
      kpis: { minBidDepth200: { daysMet: 26, daysMissed: 2 } },
      daysFlagged: 1,
      medianDepthShare200: { bid: 0.4213, ask: 0.3875 },
    },
  ],
};

const exampleDaily: DailyScorecardsResponse = {
  dateGte: "2026-11-21",
  dateLte: "2026-11-22",
  items: [
    {
      date: "2026-11-21",
      ...market,
      status: "missed",
      late: true,
      failedKpis: ["minBidDepth200"],
      eligibilityStatus: "eligible",
    },
    {
      date: "2026-11-22",
      ...market,
      status: "missing",
      late: false,
      failedKpis: [],
      eligibilityStatus: null,
    },
  ],
};

const scope =
  "Every obligation market in the caller's scope: a market maker's own, a project's coins (every market maker), or all (operator).";
const judging =
  "Day D is due by D+1 at REPORT_DEADLINE_UTC (default 12:00 UTC); until then it is pending and counted nowhere. A due day is missing without a report, met when the report meets every KPI of its period (a null value misses), else missed; late when its first accepted version arrived after the deadline.";
const range = `Default range: the 30 days ending yesterday (UTC); at most ${MAX_SCORECARD_DAYS} days.`;
const csvChoice =
  "`Accept: text/csv` (preferred by its q-value over application/json) answers the same items as CSV; errors stay JSON.";

const errors = {
  ...queryErrors({
    path: "dateLte",
    message: "dateGte (2026-11-30) is after dateLte (2026-11-01)",
  }),
  ...authenticatedErrors,
};

const scorecards = {
  operationId: "getScorecards",
  summary: "Scorecards: how each obligation market was reported and met over a range of days",
  description: `${scope} ${judging} ${range} Items are ordered by organizationId, baseCoinId, exchangeId, quote and instrumentType. ${csvChoice}`,
  tags: ["scorecards"],
  querystring: scorecardQuerySchema,
  response: {
    200: csvOrJson(
      "One scorecard per obligation market (JSON), or one CSV row per market",
      scorecardsResponseSchema.meta({ examples: [exampleScorecards] }),
      `RFC 4180 CSV: a header row, then one row per obligation market. Columns: ${SCORECARD_CSV_COLUMNS.join(", ")}. Then two for each KPI judged on some market's due reported days (a key of some item's kpis in JSON), in catalogue order: <kpi>.daysMet, <kpi>.daysMissed (empty for a market with no such day). Empty cells are nulls.`,
      scorecardCsvLines(exampleScorecards),
    ),
    ...errors,
  },
};

const daily = {
  operationId: "getDailyScorecards",
  summary: "Scorecards day by day: each obligation market's status on each day",
  description: `${scope} ${judging} ${range} One item per obligation market and day, pending days included, ordered by market then date. Not paged: an answer over ${MAX_DAILY_ITEMS} market-days is a 400 (narrow the dates or filter by organizationId or baseCoinId). ${csvChoice}`,
  tags: ["scorecards"],
  querystring: scorecardQuerySchema,
  response: {
    200: csvOrJson(
      "One item per obligation market and day (JSON), or one CSV row per market and day",
      dailyScorecardsResponseSchema.meta({ examples: [exampleDaily] }),
      `RFC 4180 CSV: a header row, then one row per obligation market and day. Columns: ${DAILY_SCORECARD_CSV_COLUMNS.join(", ")}. failedKpis are separated by spaces; late is true or false; an empty eligibilityStatus means no report.`,
      dailyScorecardCsvLines(exampleDaily),
    ),
    ...errors,
  },
};

export function scorecardRoutes(services: Services) {
  return async (base: FastifyInstance) => {
    const app = base.withTypeProvider<ZodTypeProvider>();
    app.get("/api/v1/scorecards", { schema: scorecards }, async (request, reply) => {
      const result = await services.getScorecards(request.caller, request.query);
      if (!prefersCsv(request.headers.accept)) return reply.type(JSON_TYPE).send(result);
      return sendScorecardsCsv(reply, result);
    });
    app.get("/api/v1/scorecards/daily", { schema: daily }, async (request, reply) => {
      const result = await services.getDailyScorecards(request.caller, request.query);
      if (!prefersCsv(request.headers.accept)) return reply.type(JSON_TYPE).send(result);
      return sendDailyScorecardsCsv(reply, result);
    });
  };
}

const JSON_TYPE = "application/json; charset=utf-8";

/** A 200 that is JSON by default and CSV when the client prefers it (`Accept`). */
function csvOrJson(description: string, json: z.ZodType, csv: string, exampleLines: string[]) {
  return {
    description,
    content: {
      "application/json": { schema: json },
      "text/csv": {
        schema: z.string().meta({ description: csv, examples: [csvText(exampleLines)] }),
      },
    },
  };
}
