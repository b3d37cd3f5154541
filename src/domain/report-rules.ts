import { EARLIEST_DATE } from "./dates.js";
import type { Problem } from "./errors.js";
import type { Coin, Exchange, ReferenceData } from "./reference-data.js";
import type { InstrumentType } from "./report.js";
import { routeExchange } from "./routing.js";

/** Contract: a date from 2000-01-01 up to yesterday (UTC): the trading day must be over. */
export function dateProblem(date: string, today: string): Problem | undefined {
  if (date < EARLIEST_DATE)
    return { message: `Date must not be before ${EARLIEST_DATE}`, code: "date_too_early" };
  if (date >= today) return { message: "Date must be in the past", code: "date_not_past" };
  return undefined;
}

/**
 * A quote symbol is stored upper-cased (it is the record key's quote), and upper-casing
 * lengthens some letters (`ß` becomes `SS`): the length limit holds for the symbol as stored,
 * so that every stored report, exported, can be submitted again.
 */
export function storedSymbolProblem(symbol: string, maxLength: number): Problem | undefined {
  if (symbol.length <= maxLength && symbol.toUpperCase().length <= maxLength) return undefined;
  return {
    message: `String must contain at most ${maxLength} character(s)`,
    code: "text_too_long",
  };
}

export function knownExchange(ref: ReferenceData, id: string): Exchange | Problem {
  return (
    ref.exchanges.get(id) ?? {
      message: `Exchange with id '${id}' does not match any supported exchange id`,
      code: "unknown_exchange",
    }
  );
}

export function knownBaseCoin(ref: ReferenceData, id: string): Coin | Problem {
  return (
    ref.coins.get(id) ?? {
      message: `Base coin with id '${id}' does not match any valid ticker id`,
      code: "unknown_base_coin",
    }
  );
}

export function knownQuoteCoin(ref: ReferenceData, id: string): Coin | Problem {
  return (
    ref.coins.get(id) ?? {
      message: `Quote coin with id '${id}' does not match any valid ticker id`,
      code: "unknown_quote_coin",
    }
  );
}

export const MISSING_QUOTE: Problem = {
  message: "Either quoteCoinId or quoteCoinSymbol is required",
  code: "missing_quote",
};

export function routedExchange(
  exchange: Exchange,
  type: InstrumentType,
  ref: ReferenceData,
): Exchange | Problem {
  const routing = routeExchange(exchange, type, ref);
  if ("exchange" in routing) return routing.exchange;
  const code = type === "spot" ? "not_spot_exchange" : "not_derivatives_exchange";
  return { message: routing.problem, code };
}

export function duplicateProblem(firstIndex: number): Problem {
  return {
    message: `Duplicate record key (same as data.${firstIndex})`,
    code: "duplicate_record_key",
  };
}
