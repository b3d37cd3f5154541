import { EARLIEST_DATE } from "./dates.js";
import type { Problem } from "./errors.js";
import type { Coin, Exchange, ReferenceData } from "./reference-data.js";
import type { InstrumentType } from "./report.js";
import { routeExchange } from "./routing.js";

/** Contract: a date from 2000-01-01 up to yesterday (UTC): the trading day must be over. */
export function dateProblem(date: string, today: string): string | undefined {
  if (date < EARLIEST_DATE) return `Date must not be before ${EARLIEST_DATE}`;
  if (date >= today) return "Date must be in the past";
  return undefined;
}

export function knownExchange(ref: ReferenceData, id: string): Exchange | Problem {
  return (
    ref.exchanges.get(id) ?? {
      message: `Exchange with id '${id}' does not match any supported exchange id`,
    }
  );
}

export function knownBaseCoin(ref: ReferenceData, id: string): Coin | Problem {
  return (
    ref.coins.get(id) ?? { message: `Base coin with id '${id}' does not match any valid ticker id` }
  );
}

export function knownQuoteCoin(ref: ReferenceData, id: string): Coin | Problem {
  return (
    ref.coins.get(id) ?? {
      message: `Quote coin with id '${id}' does not match any valid ticker id`,
    }
  );
}

export const MISSING_QUOTE = "Either quoteCoinId or quoteCoinSymbol is required";

export function routedExchange(
  exchange: Exchange,
  type: InstrumentType,
  ref: ReferenceData,
): Exchange | Problem {
  const routing = routeExchange(exchange, type, ref);
  return "exchange" in routing ? routing.exchange : { message: routing.problem };
}

export function duplicateProblem(firstIndex: number): string {
  return `Duplicate record key (same as data.${firstIndex})`;
}
