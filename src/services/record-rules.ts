import type { Problem } from "../domain/errors.js";
import type { Exchange, ReferenceData } from "../domain/reference-data.js";
import {
  type InstrumentType,
  quoteKeyOf,
  type RecordKey,
  type SchemaVersion,
} from "../domain/report.js";
import {
  dateProblem,
  knownBaseCoin,
  knownExchange,
  knownQuoteCoin,
  MISSING_QUOTE,
  routedExchange,
  storedSymbolProblem,
} from "../domain/report-rules.js";
import { v1InstrumentType } from "../domain/routing.js";
import { MAX_ID_LENGTH } from "../schemas/text.js";

export type FieldProblem = Omit<Problem, "path"> & { field: string | undefined };

/** Where a record is stored: its exchange after routing, and its instrument type. */
export type Stored = { exchange: Exchange; instrumentType: InstrumentType };

/** The fields a record's key is made of (the exchange and instrument type after routing). */
export const IDENTITY_FIELDS = [
  "date",
  "exchangeId",
  "baseCoinId",
  "quoteCoinId",
  "quoteCoinSymbol",
  "instrumentType",
];

/** The key a record is stored under, from its identity fields and where it is routed. */
export function storedKeyOf(
  record: {
    date: string;
    baseCoinId: string;
    quoteCoinId?: string | null;
    quoteCoinSymbol?: string | null;
  },
  stored: Stored,
): RecordKey & { quoteCoinId: string | null; quoteCoinSymbol: string | null } {
  const quoteCoinId = record.quoteCoinId ?? null;
  const quoteCoinSymbol = record.quoteCoinSymbol?.toUpperCase() ?? null;
  return {
    date: record.date,
    exchangeId: stored.exchange.id,
    baseCoinId: record.baseCoinId,
    quoteKey: quoteKeyOf(quoteCoinId, quoteCoinSymbol),
    instrumentType: stored.instrumentType,
    quoteCoinId,
    quoteCoinSymbol,
  };
}

/** The domain rules on whichever fields passed the shape check (`value` is MALFORMED else). */
export function ruleProblems(
  version: SchemaVersion,
  value: (field: string) => unknown,
  ref: ReferenceData,
  today: string,
): { problems: FieldProblem[]; stored?: Stored } {
  const problems: FieldProblem[] = [];
  const add = (field: string, problem: Problem | undefined) => {
    if (problem !== undefined)
      problems.push({ field, message: problem.message, code: problem.code });
  };
  const date = value("date");
  if (typeof date === "string") add("date", dateProblem(date, today));

  let exchange: Exchange | undefined;
  const exchangeId = value("exchangeId");
  if (typeof exchangeId === "string") {
    const found = knownExchange(ref, exchangeId);
    if ("message" in found) add("exchangeId", found);
    else exchange = found;
  }
  const baseCoinId = value("baseCoinId");
  if (typeof baseCoinId === "string") {
    const found = knownBaseCoin(ref, baseCoinId);
    if ("message" in found) add("baseCoinId", found);
  }
  const quoteCoinId = value("quoteCoinId");
  const quoteCoinSymbol = value("quoteCoinSymbol");
  if (typeof quoteCoinId === "string") {
    const found = knownQuoteCoin(ref, quoteCoinId);
    if ("message" in found) add("quoteCoinId", found);
  } else if (quoteCoinId == null && quoteCoinSymbol == null) {
    add("quoteCoinId", MISSING_QUOTE);
  }
  if (typeof quoteCoinSymbol === "string")
    add("quoteCoinSymbol", storedSymbolProblem(quoteCoinSymbol, MAX_ID_LENGTH));

  if (exchange === undefined) return { problems };
  const requested = version === 2 ? value("instrumentType") : v1InstrumentType(exchange);
  if (requested !== "spot" && requested !== "perp") return { problems };
  const routed = routedExchange(exchange, requested, ref);
  if ("message" in routed) {
    add(version === 2 ? "instrumentType" : "exchangeId", routed);
    return { problems };
  }
  return { problems, stored: { exchange: routed, instrumentType: requested } };
}
