import type { ReferenceData } from "./reference-data.js";
import type { EligibilityReason, InstrumentType } from "./report.js";

/** The market a report is matched against: exchange, base, quote and instrument type. */
export type MarketPair = {
  exchangeId: string;
  baseCoinId: string;
  instrumentType: InstrumentType;
  /** Set for crypto quotes; matched against the market's quote coin id. */
  quoteCoinId: string | null;
  /** Used when there is no quote coin id; matched against the market's quote symbol. */
  quoteSymbol: string;
};

/** The outcome of matching a pair with market data, before the report's date is considered. */
export type MarketMatch = { reason: EligibilityReason } | { collectedSince: string };

/** Spec section 3, reasons 1 to 3, in that order of precedence. */
export function matchMarket(pair: MarketPair, ref: ReferenceData): MarketMatch {
  const exchange = ref.exchanges.get(pair.exchangeId);
  if (exchange === undefined || !exchange.marketData) {
    return { reason: "exchange_market_data_missing" };
  }
  const markets = ref.marketsOf(pair.exchangeId, pair.baseCoinId, pair.instrumentType);
  if (markets.length === 0) return { reason: "base_not_traded" };
  const symbol = pair.quoteSymbol.toUpperCase();
  let collectedSince: string | undefined;
  // Several markets may quote one coin under different symbols (USDT, USDT.E): the pair's
  // collection started with the earliest of them, whatever order the markets were read in.
  for (const m of markets) {
    const matches =
      pair.quoteCoinId !== null ? m.quoteCoinId === pair.quoteCoinId : m.quoteSymbol === symbol;
    if (matches && (collectedSince === undefined || m.collectedSince < collectedSince))
      collectedSince = m.collectedSince;
  }
  return collectedSince === undefined ? { reason: "pair_not_found" } : { collectedSince };
}

/** Reason 4 on top of the match: a report dated before collection started for its pair. */
export function eligibilityReasonOf(date: string, match: MarketMatch): EligibilityReason | null {
  if ("reason" in match) return match.reason;
  return date < match.collectedSince ? "before_collection_start" : null;
}
