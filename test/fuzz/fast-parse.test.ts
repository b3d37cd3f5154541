import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { fastParser } from "../../src/schemas/fast-parse.js";
import {
  MAX_V1_BATCH,
  MAX_V2_BATCH,
  submissionBodySchema,
  v1RecordSchema,
  v2RecordSchema,
} from "../../src/schemas/report.js";
import { v1Record, v2Record } from "../helpers/fixture.js";

/** Bounded in CI; `npm run fuzz` sets FUZZ_RUNS much higher. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 500);

/** The fast parser vouches only for what Zod accepts, with Zod's very value (keys in order). */
function expectAgreement(schema: z.ZodType, parse: (input: unknown) => unknown, input: unknown) {
  const fast = parse(input);
  if (fast === undefined) return false;
  const zod = schema.safeParse(input);
  expect(zod.success).toBe(true);
  expect(fast).toStrictEqual(zod.data);
  if (typeof fast === "object" && fast !== null)
    expect(Object.keys(fast)).toEqual(Object.keys(zod.data as object));
  return true;
}

const longId = (length: number) => "x".repeat(length);
const edgeStrings = fc.constantFrom(
  "",
  "a",
  "ab",
  longId(200),
  longId(201),
  "💥".repeat(100),
  "💥".repeat(101),
  "a\u0000b",
  "a\ud800b",
  "\udc00",
  "💥",
  "2025-02-29",
  "2024-02-29",
  "2025-13-01",
  "0000-01-01",
  "binance",
  "spot",
  "perp",
  "project",
  "prop",
  "SPOT",
);
const edgeNumbers = fc.constantFrom(-0, 0, -1, 100, 100.0000001, 1e308, Number.MIN_VALUE);
const anyValue = fc.oneof(
  { arbitrary: edgeStrings, weight: 4 },
  { arbitrary: edgeNumbers, weight: 3 },
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.double(),
  fc.constantFrom(null, undefined, true, Number.NaN, Number.POSITIVE_INFINITY, "1", [], {}),
  fc.anything({ maxDepth: 2 }),
);

/** A valid record with fields dropped, replaced or added (also from parsed JSON). */
function mutated(base: Record<string, unknown>) {
  const fields = Object.keys(v2Record());
  return fc
    .record({
      drop: fc.subarray(fields, { maxLength: 2 }),
      replace: fc.dictionary(fc.constantFrom(...fields), anyValue, { maxKeys: 2 }),
      extra: fc.dictionary(fc.constantFrom("__proto__", "constructor", "x"), anyValue, {
        maxKeys: 2,
      }),
      viaJson: fc.boolean(),
    })
    .map(({ drop, replace, extra, viaJson }) => {
      const record: Record<string, unknown> = { ...base, ...replace, ...extra };
      for (const field of drop) delete record[field];
      return viaJson ? JSON.parse(JSON.stringify(record) ?? "null") : record;
    });
}

describe("the fast parser of submissions agrees with Zod", () => {
  const cases = [
    { name: "v2 records", schema: v2RecordSchema, base: v2Record() },
    { name: "v1 records", schema: v1RecordSchema, base: v1Record() },
  ];
  for (const { name, schema, base } of cases) {
    it(`on ${name}, valid and not`, () => {
      const parse = fastParser(schema);
      expect(expectAgreement(schema, parse, base)).toBe(true);
      fc.assert(
        fc.property(mutated(base), (record) => {
          expectAgreement(schema, parse, record);
        }),
        { numRuns: RUNS },
      );
    });
  }

  it("on v1 defaults, nullish quotes and the quote fields' lengths", () => {
    const parse = fastParser(v1RecordSchema);
    for (const record of [
      v1Record({ quoteCoinId: null, quoteCoinSymbol: "usd" }),
      v1Record({ quoteCoinId: undefined }),
      v1Record({ bidAskSpread: undefined, orderFillVolumeMaker: 7 }),
      v1Record({ exchangeId: "b" }),
      v1Record({ exchangeId: "💥".repeat(150) }),
    ]) {
      expectAgreement(v1RecordSchema, parse, record);
    }
    // Vouched for: the common case does not fall back to Zod.
    expect(parse(v1Record({ quoteCoinId: null, quoteCoinSymbol: "usd" }))).toBeDefined();
  });

  it("on whole bodies", () => {
    for (const [max, record] of [
      [MAX_V2_BATCH, v2Record()],
      [MAX_V1_BATCH, v1Record()],
    ] as const) {
      const schema = submissionBodySchema(z.unknown(), max);
      const parse = fastParser(schema);
      const bodies = fc.oneof(
        fc.integer({ min: 0, max: max + 1 }).map((n) => ({ data: Array(n).fill(record) })),
        fc.record({ data: fc.array(anyValue, { maxLength: 3 }) }),
        anyValue,
      );
      fc.assert(
        fc.property(bodies, (body) => void expectAgreement(schema, parse, body)),
        {
          numRuns: RUNS / 5,
        },
      );
    }
  });

  it("refuses to compile what it does not know", () => {
    expect(() => fastParser(z.string().email())).toThrow(/not supported/);
    expect(() => fastParser(z.object({ a: z.string() }).catchall(z.string()))).toThrow(
      /not supported/,
    );
    expect(() => fastParser(z.string().transform((s) => s.length))).toThrow(/not supported/);
    expect(() => fastParser(z.coerce.number())).toThrow(/not supported/);
  });

  it("leaves to Zod, never throws, what its generated code did not foresee", () => {
    const throwing = z.string().refine((s) => {
      if (s === "boom") throw new Error("refinement failed");
      return true;
    });
    const parse = fastParser(throwing);
    expect(parse("fine")).toBe("fine");
    expect(parse("boom")).toBeUndefined();
  });
});
