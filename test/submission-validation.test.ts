import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { v1Record, v2Record } from "./helpers/fixture.js";
import { SPEC_V2_ONLY_METRICS, SPEC_V1_METRICS as V1_METRICS } from "./helpers/spec-fields.js";
import { dayAfter, problemsOf, submit, type Version } from "./helpers/submission.js";

// A fixed clock, so that "today" and "tomorrow" are known dates.
const TODAY = "2025-06-15";
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ now: () => new Date(`${TODAY}T12:00:00Z`) });
});
afterAll(async () => t?.close());

const V2_METRICS = [...V1_METRICS, ...SPEC_V2_ONLY_METRICS];
const PERCENTAGES = new Set(["bidAskSpread", "topOfBookPercentage"]);
const ABSENT = Symbol("absent");
const INFINITE = Symbol("1e309");

type Case = { version: Version; field: string; value: unknown; message: string };

/** The record of a case: a valid one with `field` set to `value` (or removed). */
function recordOf(c: Case): Record<string, unknown> {
  const base = c.version === 2 ? v2Record() : v1Record();
  const record: Record<string, unknown> = { ...base, [c.field]: c.value };
  if (c.value === ABSENT) delete record[c.field];
  return record;
}

/** The body of a case; infinite numbers are not JSON, so they are spliced into the text. */
function bodyOf(c: Case): string {
  const text = JSON.stringify({ data: [recordOf(c)] }, (_k, v) =>
    v === INFINITE ? "__INFINITE__" : v,
  );
  return text.replace('"__INFINITE__"', "1e309");
}

const TYPE_ERRORS: [unknown, string][] = [
  ["12", "string"],
  [null, "null"],
  [true, "boolean"],
  [[1], "array"],
  [{ value: 1 }, "object"],
];

function metricCases(version: Version, metrics: string[]): Case[] {
  return metrics.flatMap((field): Case[] => [
    ...(version === 2 ? [{ version, field, value: ABSENT, message: "Required" }] : []),
    ...TYPE_ERRORS.map(([value, received]) => ({
      version,
      field,
      value,
      message: `Expected number, received ${received}`,
    })),
    { version, field, value: -1, message: "Number must be greater than or equal to 0" },
    { version, field, value: INFINITE, message: "Number must be finite" },
    ...(PERCENTAGES.has(field)
      ? [{ version, field, value: 100.01, message: "Number must be less than or equal to 100" }]
      : []),
  ]);
}

function identityCases(version: Version): Case[] {
  const c = (field: string, value: unknown, message: string): Case => ({
    version,
    field,
    value,
    message,
  });
  const badDate = "Invalid date, expected YYYY-MM-DD";
  return [
    c("date", ABSENT, "Required"),
    c("date", 20250301, "Expected string, received number"),
    c("date", "2025-02-30", badDate),
    c("date", "2025-1-01", badDate),
    c("date", "", badDate),
    c("date", "2025-03-01T00:00:00Z", badDate),
    c("date", "1999-12-31", "Date must not be before 2000-01-01"),
    c("date", TODAY, "Date must be in the past"),
    c("date", dayAfter(TODAY, 1), "Date must be in the past"),
    c("exchangeId", ABSENT, "Required"),
    c("exchangeId", 7, "Expected string, received number"),
    c("exchangeId", "nope", "Exchange with id 'nope' does not match any supported exchange id"),
    c("baseCoinId", ABSENT, "Required"),
    c("baseCoinId", null, "Expected string, received null"),
    c("baseCoinId", "nope", "Base coin with id 'nope' does not match any valid ticker id"),
    c("quoteCoinId", "nope", "Quote coin with id 'nope' does not match any valid ticker id"),
    c("quoteCoinId", ABSENT, "Either quoteCoinId or quoteCoinSymbol is required"),
    c("quoteCoinId", null, "Either quoteCoinId or quoteCoinSymbol is required"),
    c("quoteCoinSymbol", 5, "Expected string, received number"),
    // PostgreSQL cannot store NUL, and would store a lone surrogate as U+FFFD (altered).
    c("quoteCoinSymbol", "US\u0000D", "String must not contain NUL characters"),
    c("quoteCoinSymbol", "US\ud800D", "String must be well-formed Unicode (no lone surrogates)"),
    c("baseCoinId", "\udfffx", "String must be well-formed Unicode (no lone surrogates)"),
    c("quoteCoinSymbol", "U".repeat(201), "String must contain at most 200 character(s)"),
    // Stored upper-cased: 150 x ß is stored as 300 x S, which could not be submitted again.
    c("quoteCoinSymbol", "\u00df".repeat(150), "String must contain at most 200 character(s)"),
  ];
}

const enumCases: Case[] = [
  { version: 2, field: "instrumentType", value: ABSENT, message: "Required" },
  {
    version: 2,
    field: "instrumentType",
    value: "x",
    message: "Invalid enum value. Expected 'spot' | 'perp', received 'x'",
  },
  { version: 2, field: "type", value: ABSENT, message: "Required" },
  {
    version: 2,
    field: "type",
    value: "x",
    message: "Invalid enum value. Expected 'project' | 'exchange' | 'prop', received 'x'",
  },
];

const cases: Case[] = [
  ...identityCases(2),
  ...metricCases(2, V2_METRICS),
  ...enumCases,
  ...identityCases(1),
  ...metricCases(1, V1_METRICS),
];

const show = (value: unknown) =>
  value === ABSENT ? "absent" : value === INFINITE ? "1e309" : JSON.stringify(value);

describe("each field and rule of a record", () => {
  it.each(
    cases.map((c) => [`v${c.version}`, c.field, show(c.value), c.message, c] as const),
  )("a %s record whose %s is %s is refused with '%s'", async (_v, field, _s, message, c) => {
    const response = await submit(t, c.version, bodyOf(c));
    expect(problemsOf(response)).toEqual([{ path: `data.0.${field}`, message }]);
  });

  it("a record that is not an object is refused at its index", async () => {
    const response = await submit(t, 2, { data: [v2Record({ date: "2020-01-01" }), 5, null] });
    expect(problemsOf(response)).toEqual([
      { path: "data.1", message: "Expected object, received number" },
      { path: "data.2", message: "Expected object, received null" },
    ]);
  });
});

describe("a quote symbol's length, as stored", () => {
  it("takes 200 characters once upper-cased, and stores them upper-cased", async () => {
    const symbol = `${"\u00df".repeat(99)}x`; // 199 characters upper-cased
    const record = { ...v2Record(), quoteCoinId: undefined, quoteCoinSymbol: symbol };
    const response = await submit(t, 2, JSON.stringify({ data: [record] }));
    expect(response.statusCode).toBe(201);
    const stored = await t.database.db
      .selectFrom("reports")
      .select(["quote_key", "quote_coin_symbol"])
      .where("quote_key", "=", symbol.toUpperCase())
      .executeTakeFirstOrThrow();
    expect(stored.quote_coin_symbol).toBe(`${"SS".repeat(99)}X`);
  });

  it("refuses the whole batch, storing nothing, when one symbol is too long as stored", async () => {
    const before = await t.database.db
      .selectFrom("reports")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow();
    const good = { ...v2Record({ date: "2020-02-02" }) };
    const long = { ...v2Record({ date: "2020-02-03" }), quoteCoinId: undefined };
    const response = await submit(t, 2, {
      data: [good, { ...long, quoteCoinSymbol: "\u00df".repeat(101) }],
    });
    expect(response.statusCode).toBe(400);
    expect(problemsOf(response)).toEqual([
      { path: "data.1.quoteCoinSymbol", message: "String must contain at most 200 character(s)" },
    ]);
    const after = await t.database.db
      .selectFrom("reports")
      .select((eb) => eb.fn.countAll<string>().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });
});
