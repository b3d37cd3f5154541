import { z } from "zod";
import { INSTRUMENT_TYPES } from "../domain/report.js";
import { positiveInteger } from "./list-query.js";
import { DATE_LENGTH } from "./report.js";
import { storableText, wholeNumber } from "./text.js";

/** Markets per page of GET /api/v1/markets, at most and by default. */
export const MAX_MARKETS_PAGE_SIZE = 1000;

/** Query of GET /api/v1/markets. Unknown parameters are ignored, as for the report listing. */
export const marketsQuerySchema = z.object({
  baseCoinId: storableText(200).optional().meta({
    description: "Only markets of this base coin (CoinGecko coin id)",
    example: "chainlink",
  }),
  exchangeId: storableText(200).optional().meta({
    description:
      "Only markets of this exchange, as stored: a perp is listed under its venue family's derivatives exchange (binance_futures, not binance)",
    example: "binance",
  }),
  page: positiveInteger(999_999_999, "Expected a positive integer")
    .optional()
    .meta({ description: "Page number, from 1 (default 1)", example: "1" }),
  pageSize: positiveInteger(
    MAX_MARKETS_PAGE_SIZE,
    `Expected an integer from 1 to ${MAX_MARKETS_PAGE_SIZE}`,
  )
    .optional()
    .meta({
      description: `Markets per page, 1 to ${MAX_MARKETS_PAGE_SIZE} (default ${MAX_MARKETS_PAGE_SIZE})`,
      example: "100",
    }),
});
export type MarketsQuery = z.infer<typeof marketsQuerySchema>;

/** One market with market data: a report on it is matched against `collectedSince`. */
// Markets come from fixtures (limited like any stored identifier) or from CoinGecko's tickers,
// stored as CoinGecko names them: their strings have no limit of the service's own.
export const marketItemSchema = z
  .object({
    exchangeId: z
      .string()
      .meta({ description: "Exchange the market is stored under", example: "binance" }),
    baseCoinId: z.string().meta({ description: "Base coin (CoinGecko id)", example: "chainlink" }),
    quoteCoinId: z.string().optional().meta({
      description:
        "Quote coin (CoinGecko id) for a crypto quote; absent for a fiat quote. A report's quoteCoinId is matched against it",
      example: "tether",
    }),
    quoteSymbol: z.string().meta({
      description:
        "Quote symbol, upper case. A report without quoteCoinId is matched on it (quoteCoinSymbol, case-insensitive)",
      example: "USDT",
    }),
    instrumentType: z.enum(INSTRUMENT_TYPES).meta({ description: "spot or perp (perpetual)" }),
    collectedSince: z.string().meta({
      format: "date",
      maxLength: DATE_LENGTH,
      description:
        "First day with market data (UTC). Reports dated earlier are ineligible (before_collection_start)",
      example: "2024-01-01",
    }),
  })
  .meta({ id: "Market" });
export type MarketItem = z.infer<typeof marketItemSchema>;

export const marketsPageSchema = z.object({
  page: wholeNumber().meta({ description: "This page's number" }),
  totalPages: wholeNumber().meta({ description: "Pages at this page size" }),
  totalCount: wholeNumber().meta({ description: "Markets matching the filters" }),
  items: z.array(marketItemSchema).max(MAX_MARKETS_PAGE_SIZE).meta({
    description: "Ordered by exchangeId, baseCoinId, instrumentType, quoteSymbol",
  }),
});
export type MarketsPage = z.infer<typeof marketsPageSchema>;
