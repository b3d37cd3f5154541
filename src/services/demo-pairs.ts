import type { InstrumentType } from "../domain/report.js";
import type { DemoFixture } from "./demo-reports.js";

/** A market a demo report names: its exchange, coins and instrument type. */
export interface Pair {
  exchangeId: string;
  baseCoinId: string;
  quote: { quoteCoinId: string } | { quoteCoinSymbol: string };
  instrumentType: InstrumentType;
}

/**
 * Pairs with no market, so that their reports come out ineligible: one on an exchange without
 * market data, one on an exchange that does not trade the coin, one with a quote the exchange
 * does not list for it.
 */
export function unmatchedPairs(fixture: DemoFixture, baseCoinId: string): Pair[] {
  const spotVenues = fixture.exchanges.filter((e) => e.spot);
  const ofBase = fixture.markets.filter((m) => m.baseCoinId === baseCoinId);
  const pairs: Pair[] = [];
  const add = (exchangeId: string, quoteCoinId: string) =>
    pairs.push({ exchangeId, baseCoinId, quote: { quoteCoinId }, instrumentType: "spot" });

  const noData = spotVenues.find((e) => !e.marketData);
  if (noData && !ofBase.some((m) => m.exchangeId === noData.id)) add(noData.id, "tether");
  const notTraded = spotVenues.find(
    (e) => e.marketData && !ofBase.some((m) => m.exchangeId === e.id),
  );
  if (notTraded) add(notTraded.id, "tether");
  const traded = ofBase.find((m) => m.instrumentType === "spot");
  const missingQuote = ["ethereum", "bitcoin", "usd-coin"].find(
    (q) => !ofBase.some((m) => m.exchangeId === traded?.exchangeId && m.quoteCoinId === q),
  );
  if (traded && missingQuote) add(traded.exchangeId, missingQuote);
  return pairs;
}
