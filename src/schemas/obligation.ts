import { z } from "zod";
import { KPI_NAMES, type KpiName, type Kpis } from "../domain/obligation.js";
import { INSTRUMENT_TYPES } from "../domain/report.js";
import { dateSchema, storedDate } from "./report.js";
import { MAX_ID_LENGTH, MAX_NAME_LENGTH, storableText, storedText } from "./text.js";

const id = storableText(200);

/** KPIs on a metric that is a percentage (0..100), as the metric itself is. */
const PERCENTAGE_KPIS = new Set<KpiName>(["maxBidAskSpread", "minTopOfBookPercentage"]);

const KPI_DESCRIPTIONS: Partial<Record<KpiName, string>> = {
  maxBidAskSpread: "Highest bidAskSpread (percent, 0 to 100) that meets the obligation",
  minTopOfBookPercentage: "Lowest topOfBookPercentage (0 to 100) that meets the obligation",
  minOrderFillVolumeMaker: "Lowest orderFillVolumeMaker (USD) that meets the obligation",
};

const kpiValue = (name: KpiName) => {
  const base = z.number().min(0);
  const bounded = PERCENTAGE_KPIS.has(name) ? base.max(100) : base;
  const metric = name.replace(/^min/, "").replace(/^./, (c) => c.toLowerCase());
  return bounded.optional().meta({
    description: KPI_DESCRIPTIONS[name] ?? `Lowest ${metric} (USD) that meets the obligation`,
  });
};

/** The thresholds of a period: each KPI optional, unknown names refused (CONTRACT section 4). */
export const kpisSchema = z
  .strictObject(Object.fromEntries(KPI_NAMES.map((name) => [name, kpiValue(name)])))
  .meta({ examples: [{ minBidDepth200: 50000, maxBidAskSpread: 1 }] }) as unknown as z.ZodType<
  Kpis,
  Kpis
>;

/** A market to be reported every day, named as reports are stored (after routing). */
export const obligationMarketSchema = z.strictObject({
  exchangeId: id.meta({
    description: "Exchange, as reports are stored under it",
    example: "binance",
  }),
  quote: id.meta({
    description: "The record key's quote: a quote coin id, or an upper-case fiat symbol",
    example: "tether",
  }),
  instrumentType: z.enum(INSTRUMENT_TYPES),
});

const marketKey = (m: z.infer<typeof obligationMarketSchema>) =>
  `${m.exchangeId}\u0000${m.quote}\u0000${m.instrumentType}`;

/** The most markets one period may require (refused beyond, with the entry named). */
export const MAX_OBLIGATION_MARKETS = 1000;

const marketsSchema = z
  .array(obligationMarketSchema)
  .min(1)
  .max(MAX_OBLIGATION_MARKETS)
  .superRefine((markets, ctx) => {
    const seen = new Map<string, number>();
    markets.forEach((market, i) => {
      const first = seen.get(marketKey(market));
      if (first === undefined) seen.set(marketKey(market), i);
      else ctx.addIssue({ code: "custom", path: [i], message: `duplicate of markets.${first}` });
    });
  });

/**
 * One obligation period (CONTRACT section 4): what a market maker owes for a coin from `since`
 * to `until` (inclusive; null or absent: open-ended). The fixture, the CLI's `--file` and the
 * API's items all use it.
 */
export const obligationPeriodSchema = z
  .strictObject({
    since: dateSchema.meta({ description: "First day of the period" }),
    until: dateSchema
      .nullish()
      .meta({ description: "Last day of the period; null or absent: open-ended" }),
    markets: marketsSchema.meta({ description: "The markets to be reported every day" }),
    // Absent: none, as the CLI's flags without --kpi (a day is met when it is reported).
    kpis: kpisSchema.default({}),
  })
  .refine((p) => p.until == null || p.until >= p.since, {
    message: "until must not be before since",
    path: ["until"],
  });

/** Query of GET /api/v1/obligations. Unknown parameters are ignored. */
export const obligationsQuerySchema = z.object({
  baseCoinId: id.optional().meta({ description: "Only this base coin", example: "chainlink" }),
  organizationId: id
    .optional()
    .meta({ description: "Only this market maker (project and operator keys)", example: "acme" }),
});
export type ObligationsQuery = z.infer<typeof obligationsQuerySchema>;

export const obligationItemSchema = z.object({
  organizationId: storedText(MAX_ID_LENGTH).meta({
    description: "The market maker",
    example: "acme",
  }),
  organizationName: storedText(MAX_NAME_LENGTH).meta({ example: "Acme Market Making" }),
  baseCoinId: storedText(MAX_ID_LENGTH).meta({ example: "chainlink" }),
  since: storedDate({ description: "First day of the period", example: "2026-01-01" }),
  until: storedDate({ description: "Last day of the period; null when open-ended" })
    .nullable()
    .meta({ example: null }),
  markets: z.array(obligationMarketSchema).max(MAX_OBLIGATION_MARKETS),
  kpis: kpisSchema,
});

export const obligationsResponseSchema = z.object({
  items: z.array(obligationItemSchema).meta({
    description: "Ordered by organizationId, baseCoinId, since",
  }),
});
export type ObligationsResponse = z.infer<typeof obligationsResponseSchema>;
