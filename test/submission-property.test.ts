import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { v2Record } from "./helpers/fixture.js";
import {
  SPEC_V1_METRICS as V1_METRICS,
  SPEC_V2_ONLY_METRICS as V2_ONLY,
} from "./helpers/spec-fields.js";
import { dayAfter, listReports, submit } from "./helpers/submission.js";

let t: TestApp;
beforeAll(async () => {
  // Lifted so that a long hunt (FUZZ_RUNS) is not cut short by the rate limits.
  t = await startTestApp({
    env: { RATE_LIMIT_PER_MINUTE: "1000000", RATE_LIMIT_PER_ADDRESS_PER_MINUTE: "1000000" },
  });
});
afterAll(async () => t?.close());

const PERCENTAGES = new Set(["bidAskSpread", "topOfBookPercentage"]);
/** Modest by default so that the suite stays fast; FUZZ_RUNS=... for a longer hunt. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const PROBLEM_PATH = /^(data(\.\d+(\.[A-Za-z0-9]+)?)?|x-dry-run)$/;

/** Whatever came back: never a 5xx, and every body is one of the specified shapes. */
function expectSpecifiedResponse(response: LightMyRequestResponse): void {
  expect(response.statusCode, response.body).toBeLessThan(500);
  const body = response.json();
  if (response.statusCode === 201) {
    expect(Object.keys(body).sort()).toEqual(["createdCount", "updatedCount"]);
    expect(Number.isInteger(body.createdCount) && Number.isInteger(body.updatedCount)).toBe(true);
    return;
  }
  expect(body.statusCode).toBe(response.statusCode);
  if (response.statusCode !== 400) {
    expect(typeof body.message).toBe("string");
    return;
  }
  expect(Object.keys(body).sort()).toEqual(["error", "message", "statusCode"]);
  expect(body.error).toBe("Bad Request");
  expect(body.message.length).toBeGreaterThan(0);
  let lastIndex = -1;
  for (const problem of body.message as Record<string, unknown>[]) {
    expect(typeof problem.message === "string" && problem.message.length > 0).toBe(true);
    expect(Object.keys(problem).every((k) => k === "path" || k === "message")).toBe(true);
    if (problem.path === undefined) continue;
    expect(String(problem.path)).toMatch(PROBLEM_PATH);
    const index = Number(String(problem.path).split(".")[1] ?? -1);
    expect(index, "problems in record order").toBeGreaterThanOrEqual(lastIndex);
    lastIndex = index;
  }
}

const dryRunHeader = fc.constantFrom<Record<string, string>>(
  {},
  { "x-dry-run": "true" },
  { "x-dry-run": "maybe" },
);
const version = fc.constantFrom<1 | 2>(1, 2);

/** A field value: usually plausible, sometimes anything at all. */
const fieldValue = (plausible: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 4, arbitrary: plausible },
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.anything() },
  );

const randomRecord = fc.record({
  date: fieldValue(fc.constantFrom("2024-01-02", "2025-02-30", "1999-01-01", "3000-01-01", "")),
  exchangeId: fieldValue(fc.constantFrom("binance", "binance_futures", "kraken", "deribit", "x")),
  baseCoinId: fieldValue(fc.constantFrom("chainlink", "uniswap", "bitcoin", "nope")),
  quoteCoinId: fieldValue(fc.constantFrom("tether", "nope", null)),
  quoteCoinSymbol: fieldValue(fc.constantFrom("usd", "EUR", null)),
  bidDepth50: fieldValue(fc.double()),
  bidAskSpread: fieldValue(fc.double({ min: -10, max: 110 })),
  topOfBookPercentage: fieldValue(fc.double()),
  instrumentType: fieldValue(fc.constantFrom("spot", "perp", "x")),
  type: fieldValue(fc.constantFrom("project", "exchange", "prop", "x")),
});
const randomRecordBody = fc.record({
  data: fc.array(
    fc.oneof(
      { weight: 5, arbitrary: randomRecord.map((r) => ({ ...v2Record(), ...r })) },
      { weight: 1, arbitrary: fc.anything() },
    ),
    { maxLength: 5 },
  ),
});

describe("random bodies", () => {
  it.each([
    ["any value", fc.anything().map((v) => JSON.stringify(v) ?? "null")],
    ["any JSON text", fc.json()],
    ["records with random field values", randomRecordBody.map((v) => JSON.stringify(v))],
  ])("a body of %s never yields a 5xx, and every 4xx has the specified shape", async (_what, bodies) => {
    await fc.assert(
      fc.asyncProperty(version, bodies, dryRunHeader, async (v, body, headers) => {
        expectSpecifiedResponse(await submit(t, v, body, { headers }));
      }),
      { numRuns: RUNS },
    );
  });
});

/** Routable (exchange, instrument type) pairs and where each is stored. */
const VENUES = [
  { exchangeId: "binance", instrumentType: "spot", stored: "binance" },
  { exchangeId: "binance", instrumentType: "perp", stored: "binance_futures" },
  { exchangeId: "binance_futures", instrumentType: "spot", stored: "binance" },
  { exchangeId: "binance_futures", instrumentType: "perp", stored: "binance_futures" },
  { exchangeId: "kraken", instrumentType: "spot", stored: "kraken" },
  { exchangeId: "deribit", instrumentType: "perp", stored: "deribit" },
  { exchangeId: "nodata", instrumentType: "spot", stored: "nodata" },
] as const;

const amount = fc
  .oneof(fc.double({ min: 0, noNaN: true, noDefaultInfinity: true }), fc.nat(1e9))
  .map((x) => x + 0);
const percentage = fc.double({ min: 0, max: 100, noNaN: true }).map((x) => x + 0);
const metric = (name: string) => (PERCENTAGES.has(name) ? percentage : amount);

const validRecord = fc.record({
  day: fc.nat(1400),
  venue: fc.constantFrom(...VENUES),
  baseCoinId: fc.constantFrom("chainlink", "uniswap"),
  quote: fc.oneof(
    fc.record({ quoteCoinId: fc.constantFrom("tether", "usd-coin", "bitcoin") }),
    fc.record({
      quoteCoinSymbol: fc.oneof(
        fc.constantFrom("usd", "USD", "Eur", "usdt"),
        // Quotes, backslashes, braces, commas and any Unicode: stored exactly (upper-cased).
        fc
          .string({ unit: "binary-ascii", minLength: 1, maxLength: 12 })
          .filter((s) => !s.includes("\u0000")),
        fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }),
      ),
    }),
  ),
  type: fc.constantFrom("project", "exchange", "prop"),
  metrics: fc.record(Object.fromEntries([...V1_METRICS, ...V2_ONLY].map((m) => [m, metric(m)])), {
    requiredKeys: [],
  }),
});
type ValidRecord = typeof validRecord extends fc.Arbitrary<infer T> ? T : never;

const storedExchange = (v: 1 | 2, r: ValidRecord) =>
  v === 2 ? r.venue.stored : r.venue.exchangeId;
const quoteKey = (q: { quoteCoinId?: string; quoteCoinSymbol?: string }) =>
  q.quoteCoinId ?? String(q.quoteCoinSymbol).toUpperCase();
const dateOf = (r: ValidRecord) => dayAfter("2021-01-01", r.day);
const keyOf = (v: 1 | 2, r: ValidRecord) =>
  [dateOf(r), storedExchange(v, r), r.baseCoinId, quoteKey(r.quote)].join("|");

/** The request record: v2 sends every metric (a generated one or a fixed value), v1 only some. */
function requestRecord(v: 1 | 2, r: ValidRecord): Record<string, unknown> {
  const identity = { date: dateOf(r), exchangeId: r.venue.exchangeId, baseCoinId: r.baseCoinId };
  if (v === 1) {
    const metrics = Object.entries(r.metrics).filter(([m]) => V1_METRICS.includes(m));
    return { ...identity, ...r.quote, ...Object.fromEntries(metrics) };
  }
  const all = Object.fromEntries([...V1_METRICS, ...V2_ONLY].map((m) => [m, r.metrics[m] ?? 1]));
  return {
    ...identity,
    ...r.quote,
    ...all,
    instrumentType: r.venue.instrumentType,
    type: r.type,
  };
}

/** What the listing must show for a submitted record. */
function expectedItem(v: 1 | 2, sent: Record<string, unknown>, r: ValidRecord) {
  const v1Default = (m: string) => (m === "bidAskSpread" ? 100 : 0);
  const item: Record<string, unknown> = {
    date: sent.date,
    exchangeId: storedExchange(v, r),
    baseCoinId: r.baseCoinId,
    type: v === 2 ? r.type : null,
  };
  if ("quoteCoinId" in r.quote) item.quoteCoinId = r.quote.quoteCoinId;
  else item.quoteCoinSymbol = String(r.quote.quoteCoinSymbol).toUpperCase();
  for (const m of V1_METRICS) item[m] = sent[m] ?? v1Default(m);
  for (const m of V2_ONLY) item[m] = v === 2 ? sent[m] : null;
  return item;
}

describe("random valid batches", () => {
  it("are accepted and read back exactly through the store", async () => {
    const batches = version.chain((v) =>
      fc.tuple(
        fc.constant(v),
        fc.uniqueArray(validRecord, {
          minLength: 1,
          maxLength: 8,
          selector: (r) => keyOf(v, r),
        }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(batches, async ([v, records]) => {
        const sent = records.map((r) => requestRecord(v, r));
        const response = await submit(t, v, { data: sent });
        expect(response.statusCode, response.body).toBe(201);
        const counts = response.json();
        expect(counts.createdCount + counts.updatedCount).toBe(records.length);

        // The listing of each date of the batch (a date holds at most a few dozen keys).
        const dates = [...new Set(sent.map((r) => String(r.date)))];
        const pages = await Promise.all(
          dates.map((d) => listReports(t, { dateGte: d, dateLte: d })),
        );
        const listed = new Map(
          pages.flat().map((item) => {
            const quote = item.quoteCoinId ?? item.quoteCoinSymbol;
            return [[item.date, item.exchangeId, item.baseCoinId, quote].join("|"), item];
          }),
        );
        records.forEach((r, i) => {
          const item = listed.get(keyOf(v, r));
          const { exchangeName, baseCoinSymbol, eligibilityStatus, eligibilityReason, ...rest } =
            item ?? {};
          expect(rest).toEqual(expectedItem(v, sent[i] ?? {}, r));
          expect(eligibilityStatus).toBe(
            eligibilityReason === null ? "eligible" : "ineligible_market_data_missing",
          );
          expect(typeof exchangeName === "string" && typeof baseCoinSymbol === "string").toBe(true);
        });
      }),
      { numRuns: Math.ceil(RUNS / 4) },
    );
  });
});
