import { z as zod } from "zod";
import { eligibilityReasonOf, type MarketPair, matchMarket } from "../domain/eligibility.js";
import { type Problem, ValidationError } from "../domain/errors.js";
import type { Exchange, ReferenceData } from "../domain/reference-data.js";
import {
  type InstrumentType,
  quoteKeyOf,
  type Report,
  recordKeyString,
  type SchemaVersion,
  V1_METRICS,
  withoutNegativeZeros,
} from "../domain/report.js";
import {
  dateProblem,
  duplicateProblem,
  knownBaseCoin,
  knownExchange,
  knownQuoteCoin,
  MISSING_QUOTE,
  routedExchange,
  storedSymbolProblem,
} from "../domain/report-rules.js";
import { v1InstrumentType } from "../domain/routing.js";
import { fastParser } from "../schemas/fast-parse.js";
import { codedProblemsOf, problemCodeOf } from "../schemas/problems.js";
import {
  MAX_V1_BATCH,
  MAX_V2_BATCH,
  submissionBodySchema,
  type V1Record,
  type V2Record,
  v1RecordSchema,
  v2RecordSchema,
} from "../schemas/report.js";
import { MAX_ID_LENGTH } from "../schemas/text.js";
import { zod3Messages } from "../schemas/zod-messages.js";

const bodyShape = {
  1: submissionBodySchema(zod.unknown(), MAX_V1_BATCH),
  2: submissionBodySchema(zod.unknown(), MAX_V2_BATCH),
};
const recordSchemas = { 1: v1RecordSchema, 2: v2RecordSchema };
// The valid case without Zod's machinery; anything else goes to Zod (see fast-parse.ts).
const fastBody = { 1: fastParser(bodyShape[1]), 2: fastParser(bodyShape[2]) };
const fastRecord = { 1: fastParser(v1RecordSchema), 2: fastParser(v2RecordSchema) };
const fieldOrder = {
  1: Object.keys(v1RecordSchema.shape),
  2: Object.keys(v2RecordSchema.shape),
};

type FieldProblem = Omit<Problem, "path"> & { field: string | undefined };

/** Stands for a field that failed its shape check, in the rules run on the rest. */
const MALFORMED = Symbol("malformed");

/**
 * Validates a whole submission body: its shape, every record's fields (spec 2.1/2.2), the
 * reference data (exchange, base and quote coins), exchange routing and duplicate keys.
 * Throws a ValidationError listing every problem in record order, or returns the reports,
 * routed and with their eligibility, ready to be stored.
 */
export function validateBatch(
  version: SchemaVersion,
  body: unknown,
  ref: ReferenceData,
  today: string,
): Report[] {
  const records = fastBody[version](body)?.data ?? checkedRecords(version, body);

  const problems: Problem[] = [];
  const reports: Report[] = [];
  const firstIndexOfKey = new Map<string, number>();
  records.forEach((raw, index) => {
    const outcome = validateRecord(version, raw, ref, today);
    if ("problems" in outcome) {
      for (const p of outcome.problems) {
        problems.push({
          path: p.field ? `data.${index}.${p.field}` : `data.${index}`,
          message: p.message,
          code: p.code,
        });
      }
      return;
    }
    const key = recordKeyString(outcome.report);
    const first = firstIndexOfKey.get(key);
    if (first !== undefined) {
      problems.push({ path: `data.${index}`, ...duplicateProblem(first) });
      return;
    }
    firstIndexOfKey.set(key, index);
    reports.push(outcome.report);
  });
  if (problems.length > 0) throw new ValidationError(problems);
  return reports;
}

function checkedRecords(version: SchemaVersion, body: unknown): unknown[] {
  const shape = bodyShape[version].safeParse(body, zod3Messages);
  if (!shape.success) throw new ValidationError(codedProblemsOf(shape.error));
  return shape.data.data;
}

function validateRecord(
  version: SchemaVersion,
  raw: unknown,
  ref: ReferenceData,
  today: string,
): { report: Report } | { problems: FieldProblem[] } {
  const valid = fastRecord[version](raw);
  if (valid !== undefined) return checkRules(version, valid, raw, ref, today);
  const parsed = recordSchemas[version].safeParse(raw, zod3Messages);
  if (parsed.success) return checkRules(version, parsed.data, raw, ref, today);

  // Report the reference-data and date problems of the fields that are well-formed too, so
  // that a client sees everything wrong with a record at once.
  const problems: FieldProblem[] = parsed.error.issues.map((issue) => ({
    field: issue.path.length > 0 ? String(issue.path[0]) : undefined,
    message: issue.message,
    code: problemCodeOf(issue),
  }));
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    const bad = new Set(problems.map((p) => p.field));
    // A malformed field is present, just not usable: it must not count as missing (a
    // quoteCoinSymbol of the wrong type is not "neither quote field").
    const valid = (field: string) => (bad.has(field) ? MALFORMED : Reflect.get(raw, field));
    const partial = ruleProblems(version, valid, ref, today).problems;
    problems.push(...partial.filter((p) => !bad.has(p.field)));
  }
  const order = fieldOrder[version];
  problems.sort((a, b) => order.indexOf(a.field ?? "") - order.indexOf(b.field ?? ""));
  return { problems };
}

function checkRules(
  version: SchemaVersion,
  record: V1Record | V2Record,
  raw: unknown,
  ref: ReferenceData,
  today: string,
): { report: Report } | { problems: FieldProblem[] } {
  const outcome = ruleProblems(version, (field) => Reflect.get(record, field), ref, today);
  if (outcome.problems.length > 0 || outcome.stored === undefined)
    return { problems: outcome.problems };
  const report = buildReport(version, record, outcome.stored, ref);
  if (version === 1) {
    // `raw` is an object: the record parsed. What it left out took the spec's defaults.
    const omitted = V1_METRICS.filter((m) => Reflect.get(raw as object, m) === undefined);
    if (omitted.length > 0) report.omittedMetrics = omitted;
  }
  return { report };
}

type Stored = { exchange: Exchange; instrumentType: InstrumentType };

/** The domain rules on whichever fields passed the shape check (`value` is MALFORMED else). */
function ruleProblems(
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

function buildReport(
  version: SchemaVersion,
  record: V1Record | V2Record,
  stored: Stored,
  ref: ReferenceData,
): Report {
  const quoteCoinId = record.quoteCoinId ?? null;
  const quoteCoinSymbol = record.quoteCoinSymbol?.toUpperCase() ?? null;
  const pair: MarketPair = {
    exchangeId: stored.exchange.id,
    baseCoinId: record.baseCoinId,
    instrumentType: stored.instrumentType,
    quoteCoinId,
    quoteSymbol: quoteCoinSymbol ?? "",
  };
  const v2 = "type" in record ? record : undefined;
  // The parsed record holds every metric it has (besides its identity fields, which nothing
  // reads through `metrics`): no per-record copy, unless a metric is -0 (stored as 0).
  const metrics: Report["metrics"] = withoutNegativeZeros(record);
  return {
    date: record.date,
    exchangeId: stored.exchange.id,
    baseCoinId: record.baseCoinId,
    quoteKey: quoteKeyOf(quoteCoinId, quoteCoinSymbol),
    instrumentType: stored.instrumentType,
    quoteCoinId,
    quoteCoinSymbol,
    type: v2?.type ?? null,
    schemaVersion: version,
    metrics,
    eligibilityReason: eligibilityReasonOf(record.date, matchMarket(pair, ref)),
  };
}
